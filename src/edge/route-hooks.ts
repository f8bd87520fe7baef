// Hooks added to one route as it is registered (onRoute): Fastify holds a route's hooks of a kind as
// one function, an array, or nothing.

/** A route's hooks of one kind with `hook` last. */
export function withHook<H>(hooks: H | H[] | undefined, hook: H): H[] {
  return hooks === undefined ? [hook] : Array.isArray(hooks) ? [...hooks, hook] : [hooks, hook];
}

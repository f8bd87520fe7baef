// npm run keys -- create --label NAME | list | revoke ID   [--file PATH]
// Writes API_KEYS_FILE (default ./data/api-keys.json). A new key is printed once and only its
// hash is stored; the running server picks up changes without a restart.
import { generateKey, hashKey, readKeyFile, writeKeyFile } from './keys.ts';

function usage(): never {
  console.error('usage: npm run keys -- create --label NAME | list | revoke ID   [--file PATH]');
  process.exit(2);
}

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const v = args[i + 1];
  if (v === undefined || v.startsWith('--')) usage();
  args.splice(i, 2);
  return v;
};
const file = flag('--file') ?? process.env.API_KEYS_FILE ?? './data/api-keys.json';
const label = flag('--label');
const [command, id] = args;
const keys = readKeyFile(file);

switch (command) {
  case 'create': {
    if (!label) usage();
    const { id: newId, key } = generateKey();
    keys.push({ id: newId, label, hash: hashKey(key), created_at: new Date().toISOString(), revoked_at: null });
    writeKeyFile(file, keys);
    console.log(`created ${newId} (${label}) in ${file}`);
    console.log(`key: ${key}`);
    console.log('This key is shown once; only its hash is stored. Send it as the x-api-key header.');
    break;
  }
  case 'list': {
    if (keys.length === 0) console.log(`no keys in ${file}`);
    for (const k of keys) console.log([k.id, k.revoked_at ? `revoked ${k.revoked_at}` : 'active', k.created_at, k.label].join('\t'));
    break;
  }
  case 'revoke': {
    const k = keys.find((x) => x.id === id);
    if (!id || !k) {
      console.error(`no key with id ${id ?? '(none given)'} in ${file}`);
      process.exit(1);
    }
    k.revoked_at ??= new Date().toISOString();
    writeKeyFile(file, keys);
    console.log(`revoked ${k.id} (${k.label})`);
    break;
  }
  default:
    usage();
}

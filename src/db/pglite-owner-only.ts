// Imported by the PGlite worker before PGlite itself: the database files are owner-only (0600, and
// directories 0700) whatever the umask. PGlite's file system layer (Emscripten's NODEFS) creates a file
// and then sets its mode with an explicit fs.chmodSync to 0666, which no umask narrows (measured: 968
// of its 1,000 files 0666 under any umask); directories it makes with mkdirSync do follow the umask
// (db/data-dir.ts keeps it at 077 or more). So, in this thread alone (a worker has its own copy of
// node:fs, and runs nothing but PGlite), a mode set through node:fs loses its group and other bits.
// PostgreSQL itself never asks for them (its default data directory mode is owner-only too).
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) throw new Error('pglite-owner-only.ts narrows node:fs for the whole thread: import it only in the PGlite worker');

const ownerOnly = (mode: fs.Mode): fs.Mode => (typeof mode === 'number' ? mode & ~0o077 : mode);
const { chmodSync, fchmodSync, lchmodSync } = fs;
fs.chmodSync = (path, mode) => chmodSync(path, ownerOnly(mode));
fs.fchmodSync = (fd, mode) => fchmodSync(fd, ownerOnly(mode));
if (lchmodSync) fs.lchmodSync = (path, mode) => lchmodSync(path, ownerOnly(mode));

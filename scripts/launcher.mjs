// `npm start` runs this script under npm (in `sh -c <script>`, which may or may not exec it), and
// npm exits on SIGTERM without passing the signal on: the server would keep serving, re-parented
// to init. So while the npm that started it (or the shell between) is gone, the process sends
// itself SIGTERM, which server/main.ts answers with its graceful stop.
import { readFileSync } from 'node:fs';

// Field `index` (0 = state, 1 = parent) of /proc/<pid>/stat after the command name (Linux), or null.
function statField(pid, index) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index] ?? null;
  } catch {
    return null;
  }
}

function running(pid) {
  const state = statField(pid, 0);
  if (state) return state !== 'Z';
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The npm process: the parent, or the parent's parent when the parent is npm's `sh -c <script>`.
function npmProcess(parent) {
  let cmdline = [];
  try {
    cmdline = readFileSync(`/proc/${parent}/cmdline`, 'utf8').split('\0');
  } catch {
    // not Linux: the parent alone is watched
  }
  const grandparent = Number(statField(parent, 1));
  return cmdline.includes(process.env.npm_lifecycle_script) && grandparent > 1 ? grandparent : parent;
}

let watching = false;

// Called by scripts/start.mjs (before installing and building) and by server/main.ts (`npm run
// serve`); once per process.
export function stopWhenNpmExits() {
  const parent = process.ppid;
  if (watching || !process.env.npm_lifecycle_event || parent <= 1) return;
  watching = true;
  const npm = npmProcess(parent);
  const timer = setInterval(() => {
    if (process.ppid === parent && running(npm)) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, 1000);
  timer.unref();
}

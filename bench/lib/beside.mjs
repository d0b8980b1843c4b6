/**
 * Times commands from a small process of their own: `node bench/lib/beside.mjs '<json>'`, the
 * JSON `{ runs, warmup, commands: { name: { file, args, cwd, env } } }`; prints
 * `{ microseconds: { name: [...] }, last: { name: { status, stdout (base64), stderr } } }`.
 *
 * The benchmark's own process holds the library's live tree and content index of the whole
 * corpus (several hundred MB): each process it starts costs a fork of that, tens of
 * milliseconds, which a command of 100 ms cannot hide. A shell or an agent starting `freshfs`
 * or `rg` is small; so is this. Commands run interleaved, one run of each in turn.
 */
import { spawnSync } from "node:child_process";

const { runs, warmup, commands } = JSON.parse(process.argv[2] ?? "{}");
const names = Object.keys(commands);
const microseconds = Object.fromEntries(names.map((name) => [name, []]));
const last = {};
for (let run = 0; run < warmup + runs; run++) {
  for (const name of names) {
    const { file, args, cwd, env } = commands[name];
    const started = process.hrtime.bigint();
    const done = spawnSync(file, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 1 << 30,
    });
    const elapsed = Number(process.hrtime.bigint() - started) / 1000;
    if (done.error) throw done.error;
    if (run >= warmup) microseconds[name].push(elapsed);
    last[name] = {
      status: done.status,
      stdout: done.stdout.toString("base64"),
      stderr: done.stderr.toString("utf8"),
    };
  }
}
process.stdout.write(JSON.stringify({ microseconds, last }));

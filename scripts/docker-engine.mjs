#!/usr/bin/env node
// A Docker engine for the jobs that need one (npm run images, the container tests, .ci/run).
//   node scripts/docker-engine.mjs start    use the engine `docker info` answers; else (root on Linux) install
//                                           Debian's docker.io and start a private dockerd; prints DOCKER_HOST
//   node scripts/docker-engine.mjs stop     stops the private dockerd (never an engine this script did not start)
//   node scripts/docker-engine.mjs status   says which engine answers
// The private engine has its own data root, socket, exec root and pidfile, so it never meets a system Docker,
// and runs with --iptables=false --ip6tables=false: Docker's iptables management sets the FORWARD policy to
// DROP, which would cut the netns lab's bridge (sy-lab0). Without it a container on Docker's default bridge
// reaches nothing outside the host; `docker build --network host` reaches package registries as the host does.
// Plain Node with no dependencies (it runs before npm ci).
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { missingPrivilegedCaps, writeRuntimeShim } from "./docker-runtime-shim.mjs";

export const engine = {
  dataRoot: "/var/lib/switchyard-docker",
  runDir: "/run/switchyard",
  socket: "/run/switchyard/docker.sock",
  execRoot: "/run/switchyard/docker-exec",
  pidfile: "/run/switchyard/docker.pid",
  log: "/var/log/switchyard-docker.log",
};
export const privateHost = `unix://${engine.socket}`;
const shimName = "switchyard-runc";

function say(line) {
  console.error(`[docker] ${line}`);
}

// Thrown: the tests catch it to skip with the reason; the command line prints it and exits 1.
function fail(line) {
  throw new Error(line);
}

function has(cmd) {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

// The server version when a Docker engine answers at `host` (undefined: the client's own default), else null.
function answers(host) {
  if (!has("docker")) return null;
  const env = host ? { ...process.env, DOCKER_HOST: host } : process.env;
  const r = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
    env,
    encoding: "utf8",
    timeout: 20_000,
  });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function privatePid() {
  if (!existsSync(engine.pidfile)) return null;
  const pid = Number(readFileSync(engine.pidfile, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 && pidAlive(pid) ? pid : null;
}

function installDockerd() {
  if (has("dockerd")) return;
  if (!has("apt-get")) fail("dockerd is not installed and there is no apt-get to install docker.io with");
  const started = Date.now();
  say(
    "installing Debian's docker.io (apt-get update && apt-get install docker.io); log: /tmp/switchyard-apt.log",
  );
  const r = spawnSync(
    "sh",
    [
      "-c",
      "apt-get update >/tmp/switchyard-apt.log 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io >>/tmp/switchyard-apt.log 2>&1 || { tail -20 /tmp/switchyard-apt.log; exit 1; }",
    ],
    { stdio: "inherit" },
  );
  if (r.status !== 0) fail("apt-get install docker.io failed (see /tmp/switchyard-apt.log)");
  if (!has("dockerd")) fail("docker.io is installed but dockerd is not on PATH");
  say(`docker.io installed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

function dockerdArgs() {
  const args = [
    `--host=${privateHost}`,
    `--data-root=${engine.dataRoot}`,
    `--exec-root=${engine.execRoot}`,
    `--pidfile=${engine.pidfile}`,
    "--iptables=false",
    "--ip6tables=false",
  ];
  const missing = missingPrivilegedCaps();
  if (missing.length > 0) {
    // Only here: privileged containers would fail at start ("unable to apply caps: operation not
    // permitted") because runc asks for capabilities this host's bounding set does not have.
    const shim = writeRuntimeShim(engine.runDir, shimName);
    say(
      `this host's capability bounding set lacks ${missing.join(", ")}: registering runtime ${shimName} (${shim})`,
    );
    args.push(`--add-runtime=${shimName}=${shim}`, `--default-runtime=${shimName}`);
  }
  return args;
}

async function waitForEngine(pid) {
  const started = Date.now();
  for (let i = 1; ; i++) {
    const version = answers(privateHost);
    if (version) return version;
    // A dockerd started at the same moment by another run holds the pidfile; this one then exits, and that one answers.
    if (!pidAlive(pid) && !answers(privateHost))
      fail(`dockerd exited during start-up; last lines of ${engine.log}:\n${tail(engine.log)}`);
    if (Date.now() - started > 60_000)
      fail(
        `dockerd (pid ${pid}) did not answer on ${engine.socket} within 60 s; see ${engine.log}, or stop it: node scripts/docker-engine.mjs stop`,
      );
    if (i % 5 === 0)
      say(`waiting for dockerd on ${engine.socket} (${Math.round((Date.now() - started) / 1000)}s)`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function tail(file) {
  return existsSync(file)
    ? readFileSync(file, "utf8").trimEnd().split("\n").slice(-15).join("\n")
    : "(no log)";
}

// True when some process accepts connections on the unix socket at `path`.
function socketTaken(path) {
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const conn = connect(path);
    conn.once("connect", () => {
      conn.destroy();
      resolve(true);
    });
    conn.once("error", () => resolve(false));
  });
}

async function startPrivate() {
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    fail(
      "no Docker engine answers (docker info failed) and starting one needs root on Linux: start Docker yourself, or set DOCKER_HOST",
    );
  if (await socketTaken(engine.socket))
    fail(
      `${engine.socket} is taken by a process that does not answer as Docker; stop it or remove the socket`,
    );
  installDockerd();
  // A socket or pidfile left by a dockerd that is gone would make the new one refuse to start.
  rmSync(engine.pidfile, { force: true });
  rmSync(engine.socket, { force: true });
  for (const dir of [engine.runDir, engine.dataRoot, engine.execRoot, dirname(engine.log)])
    mkdirSync(dir, { recursive: true });
  const args = dockerdArgs();
  const out = openSync(engine.log, "a");
  const child = spawn("dockerd", args, { detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  child.unref();
  say(`started dockerd (pid ${child.pid}) ${args.join(" ")}; log: ${engine.log}`);
  return child.pid;
}

// Returns the DOCKER_HOST to use ("" when the client's own default engine answers).
export async function ensureEngine() {
  const existing = answers();
  if (existing) {
    say(
      `using the Docker engine that answers (server ${existing}${process.env.DOCKER_HOST ? ` at ${process.env.DOCKER_HOST}` : ""})`,
    );
    return process.env.DOCKER_HOST ?? "";
  }
  const ours = answers(privateHost);
  if (ours) {
    say(`using the private engine (server ${ours}) at ${privateHost}`);
    return privateHost;
  }
  const started = Date.now();
  // Another run (a second CI job, a test) may have just started it: wait for it rather than start a second one.
  const running = privatePid();
  if (running) say(`a private dockerd (pid ${running}) runs but does not answer yet; waiting for it`);
  const pid = running ?? (await startPrivate());
  const version = await waitForEngine(pid);
  say(`private engine ready (server ${version}) in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  say(`point clients at it: export DOCKER_HOST=${privateHost}`);
  return privateHost;
}

async function stopPrivate() {
  const pid = privatePid();
  if (!pid) {
    say(`no private dockerd runs (${engine.pidfile})`);
    return;
  }
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 60 && pidAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 500));
  if (pidAlive(pid)) fail(`dockerd (pid ${pid}) is still running 30 s after SIGTERM`);
  say(`stopped the private dockerd (pid ${pid}); its images stay in ${engine.dataRoot}`);
}

async function main(cmd) {
  if (cmd === "start") {
    const host = await ensureEngine();
    if (host) console.log(`DOCKER_HOST=${host}`);
  } else if (cmd === "stop") await stopPrivate();
  else if (cmd === "status") {
    const existing = answers();
    const ours = answers(privateHost);
    say(existing ? `the default engine answers (server ${existing})` : "no default engine answers");
    say(
      ours
        ? `the private engine answers at ${privateHost} (server ${ours})`
        : "the private engine is not running",
    );
  } else {
    console.error(`usage: node ${join("scripts", "docker-engine.mjs")} start|stop|status`);
    process.exit(2);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    await main(process.argv[2] ?? "start");
  } catch (err) {
    say(err.message);
    process.exit(1);
  }
}

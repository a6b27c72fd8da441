// The mirror's layout and server with small files: each origin's paths and checksum shapes, hard links, and a server
// that answers only for files under its folder. release-mirror.test.ts runs the download path through it with the
// real binaries.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { layOutMirror, type ServedMirror, serveMirror, sha256File } from "../src/upstream/mirror.js";
import { parseChecksum } from "../src/upstream/releases.js";
import { readVersions } from "../src/upstream/versions.js";

const versions = readVersions();
const platform = { os: "linux", arch: "amd64" } as const;
const v = { k8s: versions.kubernetes, etcd: versions.etcd, coredns: versions.coredns };

describe("a mirror laid out from small files", () => {
  let root: string;
  let source: string;
  let mirror: ServedMirror;
  before(async () => {
    source = mkdtempSync(join(tmpdir(), "sy-mirror-src-"));
    for (const name of ["kubectl", "etcd", "coredns", "agnhost"])
      writeFileSync(join(source, name), `#!/bin/sh\necho ${name}\n`, { mode: 0o755 });
    root = join(mkdtempSync(join(tmpdir(), "sy-mirror-")), "not-yet-made");
    const layout = await layOutMirror(
      Object.fromEntries(["kubectl", "etcd", "coredns", "agnhost"].map((n) => [n, join(source, n)])),
      root,
      { platform },
    );
    // agnhost ships only as an image: left out.
    assert.deepEqual(layout.names, ["kubectl", "etcd", "coredns"]);
    assert.deepEqual(layout.files, [
      `coredns/${v.coredns}/coredns_${v.coredns.slice(1)}_linux_amd64.tgz`,
      `coredns/${v.coredns}/coredns_${v.coredns.slice(1)}_linux_amd64.tgz.sha256`,
      `etcd/${v.etcd}/SHA256SUMS`,
      `etcd/${v.etcd}/etcd-${v.etcd}-linux-amd64.tar.gz`,
      `k8s/${v.k8s}/bin/linux/amd64/kubectl`,
      `k8s/${v.k8s}/bin/linux/amd64/kubectl.sha256`,
    ]);
    mirror = await serveMirror(root);
  });
  after(() => mirror.close());

  test("each origin's checksum file in its own shape, naming the file's real SHA-256", async () => {
    const kubectl = join(root, `k8s/${v.k8s}/bin/linux/amd64/kubectl`);
    assert.match(readFileSync(`${kubectl}.sha256`, "utf8"), /^[0-9a-f]{64}$/);
    assert.equal(
      parseChecksum(readFileSync(`${kubectl}.sha256`, "utf8"), "kubectl"),
      await sha256File(kubectl),
    );
    const etcdTar = `etcd-${v.etcd}-linux-amd64.tar.gz`;
    const sums = readFileSync(join(root, `etcd/${v.etcd}/SHA256SUMS`), "utf8");
    assert.equal(sums, `${await sha256File(join(root, `etcd/${v.etcd}`, etcdTar))}  ${etcdTar}\n`);
    const corednsTgz = `coredns_${v.coredns.slice(1)}_linux_amd64.tgz`;
    const sum = readFileSync(join(root, `coredns/${v.coredns}/${corednsTgz}.sha256`), "utf8");
    assert.equal(sum, `${await sha256File(join(root, `coredns/${v.coredns}`, corednsTgz))}  ${corednsTgz}\n`);
  });

  test("bare binaries are hard links; archives hold the binary at the published entry", () => {
    const kubectl = join(root, `k8s/${v.k8s}/bin/linux/amd64/kubectl`);
    assert.equal(statSync(kubectl).ino, statSync(join(source, "kubectl")).ino);
    const list = (file: string) =>
      execFileSync("tar", ["-tzf", join(root, file)], { encoding: "utf8" }).trim();
    assert.equal(list(`etcd/${v.etcd}/etcd-${v.etcd}-linux-amd64.tar.gz`), `etcd-${v.etcd}-linux-amd64/etcd`);
    assert.equal(list(`coredns/${v.coredns}/coredns_${v.coredns.slice(1)}_linux_amd64.tgz`), "coredns");
  });

  test("the server answers for files under its folder only", async () => {
    const get = async (path: string, method = "GET") => {
      const res = await fetch(`${mirror.url}${path}`, { method });
      return [res.status, await res.text()];
    };
    const kubectl = `/k8s/${v.k8s}/bin/linux/amd64/kubectl`;
    assert.deepEqual(await get(kubectl), [200, "#!/bin/sh\necho kubectl\n"]);
    assert.equal((await get(kubectl, "POST"))[0], 404);
    assert.equal((await get(`/k8s/${v.k8s}`))[0], 404, "a folder is no file");
    // Sent as written (fetch would resolve the dots away): a path that climbs out of the folder to a real file.
    const climb = `/k8s/${"../".repeat(root.split("/").length + 1)}etc/hostname`;
    const status = await new Promise<number | undefined>((resolve, reject) =>
      httpGet({ host: "127.0.0.1", port: new URL(mirror.url).port, path: climb }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on("error", reject),
    );
    assert.equal(status, 404, "nothing outside the folder");
    assert.equal(mirror.env.SWITCHYARD_K8S_RELEASES, `${mirror.url}/k8s`);
  });
});

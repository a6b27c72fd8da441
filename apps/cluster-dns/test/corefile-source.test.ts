import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { corefileSource, defaultCorefile, type SourceIo } from "../src/corefile-source.js";

/** A folder of files by absolute path, and what standard input holds (undefined: a terminal). */
function io(files: Record<string, string>, stdin?: string): SourceIo {
  return {
    cwd: "/srv",
    readFile: (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`open ${path}`), { code: "ENOENT" });
      return text;
    },
    stdin: () => stdin,
  };
}

describe("where the Corefile comes from (CoreDNS's loaders, in order)", () => {
  test("-conf FILE, relative to the working folder; a missing one is an error naming it", () => {
    assert.deepEqual(corefileSource("conf/Corefile", 53, io({ "/srv/conf/Corefile": "a" })), {
      text: "a",
      file: "conf/Corefile",
      rereadable: true,
    });
    assert.throws(
      () => corefileSource("/etc/coredns/Corefile", 53, io({ "/srv/Corefile": "local" })),
      /^Error: cannot read Corefile \/etc\/coredns\/Corefile: ENOENT$/,
    );
  });

  test("-conf stdin reads a pipe; from a terminal it goes on to ./Corefile, then the default", () => {
    assert.deepEqual(corefileSource("stdin", 53, io({}, ". {\n whoami\n}\n")), {
      text: ". {\n whoami\n}\n",
      file: "/dev/stdin",
      rereadable: false,
    });
    assert.equal(corefileSource("stdin", 53, io({ "/srv/Corefile": "local" })).text, "local");
    assert.equal(corefileSource("stdin", 53, io({})).text, defaultCorefile(53));
  });

  test("no -conf: ./Corefile, else `.:PORT { whoami; log }` on the default port", () => {
    assert.equal(corefileSource(undefined, 53, io({ "/srv/Corefile": "local" })).text, "local");
    assert.deepEqual(corefileSource(undefined, 1053, io({})), {
      text: ".:1053 {\nwhoami\nlog\n}\n",
      file: "Corefile",
      rereadable: false,
    });
  });

  test("a ./Corefile that exists but cannot be read is an error, not the default", () => {
    const denied: SourceIo = {
      ...io({}),
      readFile: () => {
        throw Object.assign(new Error("denied"), { code: "EACCES" });
      },
    };
    assert.throws(
      () => corefileSource(undefined, 53, denied),
      /^Error: cannot read Corefile \/srv\/Corefile: EACCES$/,
    );
  });
});

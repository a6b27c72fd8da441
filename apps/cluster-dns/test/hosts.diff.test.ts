import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { compareQueries, differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { nxdomainUpstream } from "../src/testing/process.js";

// The hosts plugin, compared with CoreDNS's binary: the same Corefile and hosts file, the same dig, the same answer.
const skip = differentialSkip();

const HOSTS = `# a comment line
127.0.0.1 localhost localhost.domain
::1 localhost ip6-localhost
10.0.0.1 example.org Alias.Example.org   # trailing comment
10.0.0.11 example.org
::FFFF:10.0.0.2 example.com
fd00::5 six.example.org
fe80::1%lo0 linklocal.test
5.6.7.8 *.apps.example.com
1.2.3.4 aa.apps.example.com
010.0.0.1 bad-octal.test
10.0.0.99
`;

describe("hosts, against CoreDNS v1.14.7", { skip }, () => {
  describe("a file and inline entries, no fallthrough", () => {
    let pair: Pair;
    before(async () => {
      const corefile = `.:{{PORT}} {
    hosts hosts.txt {
        10.9.9.9 inline.test
        10.0.0.12 example.org
        ttl 300
    }
}
`;
      pair = await startPair(corefile, { "hosts.txt": HOSTS });
    });
    after(() => pair?.stop());
    compareQueries(
      () => pair,
      [
        ["example.org", "A"],
        ["ExAmPle.ORG", "A"],
        ["alias.example.org", "A"],
        ["six.example.org", "AAAA"],
        ["localhost", "AAAA"],
        ["example.com", "A"],
        ["example.com", "AAAA"],
        ["example.org", "MX"],
        ["example.org", "TXT", "+tcp"],
        ["missing.test", "A"],
        ["bad-octal.test", "A"],
        ["inline.test", "A"],
        ["linklocal.test", "AAAA"],
        ["x.apps.example.com", "A"],
        ["aa.apps.example.com", "A"],
        ["a.b.apps.example.com", "A"],
        ["-x", "10.0.0.1"],
        ["-x", "127.0.0.1"],
        ["-x", "10.0.0.2"],
        ["-x", "10.9.9.9"],
        ["-x", "::1"],
        ["-x", "fe80::1"],
        ["-x", "8.8.8.8"],
        ["1.0.0.10.IN-ADDR.ARPA", "PTR"],
        ["0.10.in-addr.arpa", "PTR"],
        ["example.org", "PTR"],
      ],
    );
  });

  describe("zones, no_reverse and fallthrough to forward", () => {
    let pair: Pair;
    let upstream: Awaited<ReturnType<typeof nxdomainUpstream>>;
    before(async () => {
      upstream = await nxdomainUpstream();
      const corefile = `.:{{PORT}} {
    hosts hosts.txt example.org example.com {
        no_reverse
        fallthrough
    }
    forward . 127.0.0.1:${upstream.port}
}
`;
      pair = await startPair(corefile, { "hosts.txt": HOSTS });
    });
    after(async () => {
      await pair?.stop();
      upstream?.close();
    });
    compareQueries(
      () => pair,
      [
        ["example.org", "A"],
        ["example.org", "AAAA"],
        ["example.org", "MX"],
        ["missing.example.org", "A"],
        ["localhost", "A"],
        ["other.test", "TXT"],
        ["-x", "10.0.0.1"],
        ["x.apps.example.com", "A"],
      ],
    );
  });

  describe("fallthrough in some zones, fallthrough_unsupported", () => {
    let pair: Pair;
    let upstream: Awaited<ReturnType<typeof nxdomainUpstream>>;
    before(async () => {
      upstream = await nxdomainUpstream();
      const corefile = `.:{{PORT}} {
    hosts hosts.txt {
        fallthrough example.com in-addr.arpa
        fallthrough_unsupported
    }
    forward . 127.0.0.1:${upstream.port}
}
`;
      pair = await startPair(corefile, { "hosts.txt": HOSTS });
    });
    after(async () => {
      await pair?.stop();
      upstream?.close();
    });
    compareQueries(
      () => pair,
      [
        ["nope.example.com", "A"],
        ["nope.example.org", "A"],
        ["example.com", "TXT"],
        ["example.org", "TXT"],
        ["example.com", "AAAA"],
        ["-x", "8.8.4.4"],
      ],
    );
  });

  describe("reload: a rewritten file is served after the next period", () => {
    let pair: Pair;
    before(async () => {
      const corefile = `.:{{PORT}} {
    hosts hosts.txt {
        reload 200ms
    }
}
`;
      pair = await startPair(corefile, { "hosts.txt": "10.0.0.1 r.test\n" });
    });
    after(() => pair?.stop());

    test("both serve the new address, and the old name is gone", async () => {
      assert.match((await pair.dig("r.test", "A")).coredns, /10\.0\.0\.1/);
      for (const dir of [pair.ours.dir, pair.coredns.dir])
        writeFileSync(join(dir, "hosts.txt"), "10.0.0.2 r.test\n10.0.0.3 new.test\n");
      await eventually(
        "both servers to read the new file",
        async () => {
          const { ours, coredns } = await pair.dig("new.test", "A");
          return /10\.0\.0\.3/.test(ours) && /10\.0\.0\.3/.test(coredns);
        },
        { timeoutMs: 5000 },
      );
      for (const query of [
        ["r.test", "A"],
        ["new.test", "A"],
        ["-x", "10.0.0.1"],
        ["-x", "10.0.0.2"],
      ]) {
        const { ours, coredns } = await pair.dig(...query);
        assert.equal(ours, coredns, query.join(" "));
      }
    });
  });
});

import { describe } from "node:test";
import { differentialSkip } from "../src/testing/differential.js";
import { compareSetupErrors } from "./helpers/setup-errors.js";

// Malformed Corefiles, compared with CoreDNS's binary: the same file makes both refuse to start with the same
// line (plugin/NAME: FILE:LINE - Error during parsing: ...), or both start. Each case's pattern is what CoreDNS
// printed, so agreeing on some other failure cannot pass.
const skip = differentialSkip();
const block = (body: string) => `.:{{PORT}} {\n    whoami\n${body}\n}\n`;

describe("setup errors, against CoreDNS v1.14.7", { skip }, () => {
  describe("an empty {} block where a plugin takes none", () => {
    compareSetupErrors([
      [
        `.:{{PORT}} {\n    any {\n    }\n}\n`,
        /^plugin\/any: Corefile:2 - Error during parsing: Unexpected token '\{', expecting argument$/,
      ],
      [
        `.:{{PORT}} {\n    whoami { }\n}\n`,
        /^plugin\/whoami: Corefile:2 - Error during parsing: Unexpected token '\{'/,
      ],
      [`.:{{PORT}} {\n    whoami\n    minimal {}\n}\n`, /^plugin\/minimal: Corefile:3 - .*after '\{\}'$/],
      [block("    header {\n    }"), /^plugin\/header: Corefile:4 - .*after '\}'$/],
      [block("    nsid {\n    }"), /^plugin\/nsid: this plugin can only be used once per Server Block$/],
      // upstream's cancel reads a block's lines as more `cancel` lines: an empty one is accepted.
      [block("    cancel {\n    }"), /^\(started\)$/],
      [block("    rewrite name exact a.test. b.test. {\n    }"), /^plugin\/rewrite: /],
      [block("    timeouts {\n    }"), /timeouts block with no timeouts specified$/],
      [
        block("    debug {\n    }"),
        /^plugin\/debug: Corefile:3 - Error during parsing: Unexpected token '\{'/,
      ],
    ]);
  });

  describe("reload reads only its first line's arguments", () => {
    compareSetupErrors([
      [block("    reload {\n        anything\n    }"), /^\(started\)$/],
      [block("    reload 5s\n    reload 1s"), /^\(started\)$/],
      [block("    reload 1s"), /^plugin\/reload: interval value must be greater or equal to 2s$/],
      [block("    reload 5s 500ms"), /^plugin\/reload: jitter value must be 0 or greater or equal to 1s$/],
      [block("    reload soon"), /^plugin\/reload: time: invalid duration "soon"$/],
      [block("    reload 5s 1s 1s"), /^plugin\/reload: Corefile:3 - .*after '1s'$/],
    ]);
  });

  describe("the Corefile's own syntax", () => {
    compareSetupErrors([
      [".:{{PORT}} {\n    whoami\n", /Corefile:2/],
      // caddy counts braces by token: the last `}` closes hosts' block, and a server block ending in a `}` is closed.
      [".:{{PORT}} {\n    hosts {\n        192.0.2.1 a.test\n    whoami\n}\n", /^\(started\)$/],
      [
        ".:{{PORT}} {\n    hosts {\n        192.0.2.1 a.test\n",
        /^Corefile:3 - Error during parsing: Unexpected EOF$/,
      ],
      [".:{{PORT}} {\n    whoami\n    import missing.conf\n}\n", /missing\.conf/],
      [".:{{PORT}} {\n    whoami\n    import a b\n}\n", /Corefile:3/],
    ]);
  });

  describe("other plugins' wording", () => {
    compareSetupErrors([
      [block("    bogus"), /^Corefile:3 - Error during parsing: Unknown directive 'bogus'$/],
      [block("    forward"), /^plugin\/forward: Corefile:3 - Error during parsing: Wrong argument count/],
      [
        block("    kubernetes {\n        ttl 9999\n    }"),
        /^plugin\/kubernetes: Corefile:4 - .*ttl must be in range \[0, 3600\]: 9999$/,
      ],
      [block("    kubernetes {\n        labels a!=b\n    }"), /^plugin\/kubernetes: /],
      [block("    cache -1"), /^plugin\/cache: /],
      [block("    log {\n        class bogus\n    }"), /^plugin\/log: /],
      [block("    hosts {\n        ttl 0\n    }"), /^plugin\/hosts: /],
      [block("    acl {\n        allow net 10.0.0.0/33\n    }"), /^plugin\/acl: /],
      [block("    template IN A {\n        rcode BOGUS\n    }"), /^plugin\/template: /],
      [block("    local {\n        localhost_prefix maybe\n    }"), /^plugin\/local: /],
      [block("    bind 192.0.2.300"), /^plugin\/bind: /],
      [block("    loadbalance random"), /^plugin\/loadbalance: /],
      [block("    health :8080 {\n        lameduck soon\n    }"), /^plugin\/health: /],
    ]);
  });

  // Patterns Go's RE2 refuses: look-around, back-references, nested repetition operators, repeats over 1000.
  describe("regular expressions RE2 refuses", () => {
    compareSetupErrors([
      [block("    template IN A {\n        match a**\n    }"), /invalid nested repetition operator: `\*\*`$/],
      [
        block("    template IN A {\n        match ^(?=x)\n    }"),
        /invalid or unsupported Perl syntax: `\(\?=`$/,
      ],
      [block("    rewrite cname regex (a)\\1 b"), /invalid escape sequence: `\\1`$/],
      [block("    errors {\n        consolidate 5s x{1001}\n    }"), /invalid repeat count: `\{1001\}`$/],
      [block("    rewrite name regex (a+)+b {1}.test"), /^\(started\)$/],
    ]);
  });
});

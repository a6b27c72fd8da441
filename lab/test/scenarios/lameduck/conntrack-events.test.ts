import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  describeEvent,
  eventsOfLookup,
  parseConntrackEvent,
} from "../../../src/scenarios/lameduck/conntrack-events.js";

// Lines as `conntrack -E -e ALL -p udp --orig-port-dst 53 -o timestamp` printed them in a netns lab (2026-12-05).
const NEW =
  "[1796433506.293720]\t    [NEW] udp      17 30 src=10.238.1.7 dst=10.96.0.10 sport=42325 dport=53 [UNREPLIED] src=10.238.1.8 dst=10.238.1.7 sport=53 dport=42325";
const SHORTENED =
  "[1796433506.523720]\t [UPDATE] udp      17 1 src=10.238.1.7 dst=10.96.0.10 sport=42325 dport=53 src=10.238.1.8 dst=10.238.1.7 sport=53 dport=42325 mark=0 [USERSPACE] portid=4009168727";
const GONE =
  "[1796433507.495720]\t[DESTROY] udp      17 src=10.238.1.7 dst=10.96.0.10 sport=42325 dport=53 src=10.238.1.8 dst=10.238.1.7 sport=53 dport=42325 [ASSURED]";

describe("conntrack -E lines of DNS lookups", () => {
  test("each event: time, type, timeout (none on DESTROY), the lookup's port, the pod that answers, flags", () => {
    assert.deepEqual(
      { ...parseConntrackEvent(NEW), line: undefined },
      {
        at: 1796433506.29372,
        type: "NEW",
        timeout: 30,
        src: "10.238.1.7",
        sport: 42325,
        dst: "10.96.0.10",
        replySrc: "10.238.1.8",
        unreplied: true,
        assured: false,
        line: undefined,
      },
    );
    const u = parseConntrackEvent(SHORTENED);
    assert.equal(u?.type, "UPDATE");
    assert.equal(u?.timeout, 1);
    assert.equal(u?.unreplied, false);
    const d = parseConntrackEvent(GONE);
    assert.equal(d?.type, "DESTROY");
    assert.equal(d?.timeout, undefined);
    assert.equal(d?.assured, true);
    assert.equal(
      parseConntrackEvent("conntrack v1.4.7 (conntrack-tools): 3 flow events have been shown."),
      undefined,
    );
  });

  test("a lookup's events are its port's, from well before its sending (a reused entry) to shortly after", () => {
    const events = [NEW, SHORTENED, GONE].map((l) => parseConntrackEvent(l)).filter((e) => e !== undefined);
    const other = parseConntrackEvent(NEW.replaceAll("42325", "42326"));
    assert.ok(other);
    const sentMs = 1796433506.29 * 1000;
    const mine = eventsOfLookup([...events, other], 42325, sentMs);
    assert.equal(mine.length, 3);
    assert.deepEqual(eventsOfLookup(events, 42325, sentMs + 60_000), [], "not an entry a minute old");
    assert.match(describeEvent(mine[1] ?? events[0]!, sentMs), /^\+0\.234s \[UPDATE\] udp +17 1 src=/);
  });
});

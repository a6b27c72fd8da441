import { type Clock, realClock } from "@switchyard/kube";

/** The part of @switchyard/kube's Clock the server and the plugins use: timers, injectable so tests drive them. */
export type Timers = Pick<Clock, "setTimeout" | "clearTimeout">;

/** @switchyard/kube's real clock (its timers keep the process alive, as a server's should). */
export const systemTimers: Timers = realClock;

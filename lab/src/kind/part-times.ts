import type { StepClock } from "../timing/step-times.js";

/**
 * A long step's parts as rows of the timing table, from the progress lines it says at each part's start (provision:
 * "starting 4 node containers", "kubeadm init on ...", "kubeadm join on ..."): each part runs until the next
 * begins, the last until `end`. The step keeps its own row too; its parts overlap it.
 */
export function partTimer(clock: StepClock, name: (line: string) => string) {
  let endPart: (() => void) | undefined;
  const end = () => {
    endPart?.();
    endPart = undefined;
  };
  return {
    next(line: string): void {
      end();
      void clock.time(
        name(line),
        () =>
          new Promise<void>((resolve) => {
            endPart = resolve;
          }),
      );
    },
    end,
  };
}

const SUFFIX_MULTIPLIERS: Readonly<Record<string, number>> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/**
 * A resource quantity ("4", "3500m", "1.5", "2k", "5Mi") in milli-units, rounded up like Go's MilliValue.
 * Undefined for text that is not a quantity.
 */
export function parseMilliQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const [, number = "0", exponent, suffix = ""] = match;
  const multiplier =
    exponent !== undefined ? 10 ** Number(exponent.slice(1)) : (SUFFIX_MULTIPLIERS[suffix] ?? 1);
  const milli = Number(number) * multiplier * 1000;
  // The epsilon absorbs binary float error ("0.1" * 1000) so only real fractions round up.
  // + 0 turns the -0 that zero rounds to into 0.
  return Math.ceil(milli - 1e-9) + 0;
}

/** A resource quantity in whole units ("5Mi" is 5242880 bytes), rounded up like Go's Value. */
export function parseQuantity(text: string | undefined): number | undefined {
  const milli = parseMilliQuantity(text);
  return milli === undefined ? undefined : Math.ceil(milli / 1000);
}

/**
 * CPython's `random.Random`: MT19937 seeded by `init_by_array` on the integer seed, `getrandbits`,
 * `_randbelow` and `shuffle` exactly as CPython 3 implements them, so ratio splits and choice
 * shuffles reproduce the reference implementation's (engine.md, conventions).
 */
export class PyRandom {
  private readonly mt = new Uint32Array(624);
  private index = 625;

  constructor(seed: number | bigint) {
    this.seedWith(typeof seed === "bigint" ? seed : BigInt(Math.trunc(seed)));
  }

  private seedWith(seed: bigint): void {
    let n = seed < 0n ? -seed : seed;
    const key: number[] = [];
    while (n > 0n) {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.index = 624;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.index = 624;
  }

  private twist(): void {
    const mt = this.mt;
    for (let kk = 0; kk < 624; kk++) {
      const y = (mt[kk]! & 0x80000000) | (mt[(kk + 1) % 624]! & 0x7fffffff);
      mt[kk] = (mt[(kk + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    this.index = 0;
  }

  /** One 32-bit output (genrand_uint32). */
  uint32(): number {
    if (this.index >= 624) this.twist();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: 53-bit float in [0, 1). */
  random(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `getrandbits(k)` for 0 ≤ k ≤ 32. */
  getrandbits(k: number): number {
    if (k <= 0) return 0;
    return this.uint32() >>> (32 - k);
  }

  /** `_randbelow(n)` via getrandbits (n < 2^32). */
  randbelow(n: number): number {
    const k = Math.floor(Math.log2(n)) + 1;
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random.shuffle(x)` in place (Fisher–Yates from the end). */
  shuffleInPlace<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const t = x[i]!;
      x[i] = x[j]!;
      x[j] = t;
    }
    return x;
  }
}

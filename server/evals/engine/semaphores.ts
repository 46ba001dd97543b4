// Counting semaphores the lanes take a slot of (one per organization, one per model route).

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  get contended(): boolean {
    return this.waiting.length > 0;
  }
  async acquire(): Promise<() => void> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

// Shared by every engine in the process (the pg-boss worker and drainEvalWork alike).
const semaphores = new Map<string, Semaphore>();
export function semaphore(name: string, limit: number): Semaphore {
  const key = `${name}:${limit}`;
  let s = semaphores.get(key);
  if (!s) semaphores.set(key, (s = new Semaphore(limit)));
  return s;
}

/**
 * Test helper: hold a path's lock from another async context (a call started inside the
 * holder's callback would be nested in it, which the lock refuses), run `during` while it is
 * held, then let go.
 */
import { withPathLock } from "../../src/index.js";

export async function whileLocked(path: string, during: () => Promise<void>): Promise<void> {
  let release!: () => void;
  let acquired!: () => void;
  const held = new Promise<void>((done) => {
    release = done;
  });
  const got = new Promise<void>((done) => {
    acquired = done;
  });
  const holder = withPathLock(path, async () => {
    acquired();
    await held;
  });
  await got;
  try {
    await during();
  } finally {
    release();
    await holder;
  }
}

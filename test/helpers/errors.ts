/**
 * Test helper: a promise rejects with a FreshfsError of a given code.
 */
import { expect } from "vitest";
import { FreshfsError, type FreshfsErrorCode } from "../../src/index.js";

/** Awaits `promise`, expects a `FreshfsError` with `code`, and returns its message. */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: FreshfsErrorCode,
): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(FreshfsError);
  expect((error as FreshfsError).code).toBe(code);
  return (error as FreshfsError).message;
}

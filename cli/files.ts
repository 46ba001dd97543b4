import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { usageError } from './exit';

// A local file that cannot be written is the caller's path to fix: a usage error (exit 2) saying
// which file and why, never a stack trace.
function cannotWrite(file: string, error: unknown): Error {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return usageError(`Cannot write ${shownPath(file)} (${reason}).`);
}

/** Throws a usage error now when `file` could not be written later (before work that would be lost). */
export function assertWritable(file: string): void {
  try {
    const dir = path.dirname(file);
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    const existing = statSync(file, { throwIfNoEntry: false });
    if (existing?.isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
  } catch (error) {
    throw cannotWrite(file, error);
  }
}

/**
 * Writes `text` to `file` through a temporary file in the same directory and a rename, so a reader
 * never sees half a file and an interrupted write leaves the old one in place.
 */
export function writeFileAtomically(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(temp, text, { mode: 0o644 });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw cannotWrite(file, error);
  }
}

/** A path as the user would type it: relative to the working directory when inside it. */
export const shownPath = (file: string): string => {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
};

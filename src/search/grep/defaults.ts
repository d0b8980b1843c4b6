/**
 * grep's default bounds, in a module of their own that imports nothing, so that what only
 * quotes them (the CLI's help) does not load the search. Pure.
 */

/**
 * grep's default `maxFileSize`: a file is read whole into memory to be searched (rg reads bit by
 * bit and needs no bound), so this is what keeps a search of a 2 GiB log from taking 2 GiB.
 */
export const GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** grep's default `timeoutMs`: past it the search returns what it has, flagged partial. */
export const GREP_DEFAULT_TIMEOUT_MS = 60_000;
/** grep's default `maxColumns`: longer lines are cut, with a marker saying how much. */
export const GREP_DEFAULT_MAX_COLUMNS = 500;
/** grep's default `fileTimeoutMs`: a file the regex runs on longer is abandoned, and named. */
export const GREP_DEFAULT_FILE_TIMEOUT_MS = 5000;

/** Node clamps a longer timer to 1 ms: a deadline further away than this is no deadline. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * `freshfs grep`: ripgrep's command in rg's stages. The arguments as said (`args`), resolved
 * into the library's options and the printer's settings (`options`), one search per path, the
 * files in the order `--sort` asks (`sort`), printed as rg prints (`print`, `json`), and rg's
 * exit status: 0 found, 1 not, 2 an error or a search stopped at its timeout. Loaded by `main`
 * only for grep. The searches go to `backend` (the daemon, or the library loaded for the call).
 * Depends on `backend` and `commands` (the progress line, how a path operand is named, errors).
 */
import { FreshfsError } from "../../errors.js";
import { encodeName, hasEscapedBytes } from "../../io/bytes.js";
import { type SearchBackend, searchBackend } from "../backend.js";
import { badInput, isFileOperand, namer, withProgress } from "../commands.js";
import { io, type Output } from "../io.js";
import { parseGrepArgs } from "./args.js";
import { printJsonLines, printJsonResult } from "./json.js";
import { type GrepPlan, pathOptions, planGrep } from "./options.js";
import type { PathResult } from "./path-result.js";
import { printPaths, printStandard, skipNotes } from "./print.js";
import { fileSorter } from "./sort.js";

/** Runs `freshfs grep` with its arguments; returns the exit status. */
export async function grepMain(argv: readonly string[]): Promise<number> {
  const args = parseGrepArgs(argv);
  if (args.help || args.typeList) {
    // The help and rg's table of types are loaded for them only.
    const { GREP_HELP, typeList } = await import("./help.js");
    io().stdout.write(args.help ? GREP_HELP : typeList());
    return 0;
  }
  const plan = planGrep(args);
  const started = performance.now();
  const sortFiles = fileSorter(plan.sort, plan.paths);
  const backend = await (io().backend ?? searchBackend)(plan.daemon);
  let searchedEach: { searched: PathResult[]; failed: boolean };
  try {
    searchedEach = await searchEach(plan, backend);
  } finally {
    backend.close();
  }
  const { searched, failed } = searchedEach;
  const results = sortFiles(searched);

  if (plan.printer === "json-result") {
    io().stdout.write(printJsonResult(results));
    return status(results, failed, plan);
  }
  if (plan.listFiles) {
    if (!plan.quiet) write(printPaths(results, plan.print.nul));
    const listed = results.some(({ result }) => result.files.length > 0);
    return failed ? 2 : listed ? 0 : 1;
  }
  if (results.every(({ result }) => result.filesSearched === 0) && !failed) {
    throw badInput(
      "no files were searched: the directory is empty, or the -g/-t filters, ignore rules or hidden-file rule left none (try --no-ignore or --hidden).",
    );
  }
  if (!plan.quiet) {
    write(
      plan.printer === "json"
        ? printJsonLines(results, started)
        : printStandard(results, plan.print),
    );
    for (const note of results.flatMap(skipNotes)) message(note, plan);
  }
  return status(results, failed, plan);
}

/**
 * Each path searched on its own (`--files`: listed), in the order given. A path that cannot be
 * searched does not stop the others, as with rg: it is named on stderr and the status says so;
 * the only path given fails the command.
 */
async function searchEach(
  plan: GrepPlan,
  backend: SearchBackend,
): Promise<{ searched: PathResult[]; failed: boolean }> {
  const searched: PathResult[] = [];
  let failed = false;
  for (const path of plan.paths) {
    try {
      const file = isFileOperand(path);
      const options = pathOptions(plan, path, file);
      const result = await withProgress(plan.listFiles ? "files" : "grep", (progress) => {
        const reporting = { ...options, onProgress: progress.update };
        return plan.listFiles
          ? backend.grepFiles(reporting)
          : backend.grep(plan.patterns, reporting);
      });
      searched.push({ result, name: namer(path, file) });
    } catch (error) {
      if (plan.paths.length === 1 || !(error instanceof FreshfsError)) throw error;
      failed = true;
      message(error.message, plan);
    }
  }
  return { searched, failed };
}

/** rg's exit status; a search stopped at its timeout also says so on stderr. */
function status(results: readonly PathResult[], failed: boolean, plan: GrepPlan): number {
  const found = results.some(({ result }) => result.totalRecords > 0);
  if (plan.quiet && found) return 0;
  if (results.some(({ result }) => result.partial)) {
    const after = plan.timeoutMs === undefined ? "" : ` of ${plan.timeoutMs} ms`;
    io().stderr.write(
      `freshfs: the search stopped at its timeout${after}, so the results are partial (--timeout MS gives it longer)\n`,
    );
    // Neither 0 nor 1: either would say the whole tree was searched.
    return 2;
  }
  if (failed) return 2;
  return found ? 0 : 1;
}

/** A note on stderr, unless `--no-messages`. */
function message(text: string, plan: GrepPlan): void {
  if (!plan.noMessages) write(`freshfs: ${text}\n`, io().stderr);
}

/** Output as bytes: a path that is not UTF-8 (escaped bytes, `io/bytes`) prints as its bytes, as rg prints it. */
function write(text: string, to: Output = io().stdout): void {
  if (text !== "") to.write(hasEscapedBytes(text) ? encodeName(text) : text);
}

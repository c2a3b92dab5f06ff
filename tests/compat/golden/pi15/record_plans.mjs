// Record pi 1.5.2's compaction plans for every entry of the given sessions, as the
// goldens tests/compaction/test_planning.py reads (pi15/planning.json.xz).
//
//   bash ../shared/tools/pi15/setup.sh      # once: pi 1.5.2's session layer in /tmp/pi15-peer
//   node tests/compat/golden/pi15/record_plans.mjs OUT.json FILE.jsonl ...
//   python tests/compat/golden/pi15/record.py --plans OUT.json
//
// For each file (opened from a temporary copy: pi rewrites v1/v2 files it opens), every
// entry in file order as leaf (by position, since pi gives v1 entries random ids) and each
// keepRecentTokens in KEEPS: prepareCompaction(sm.getBranch(id), settings) as the position
// of the first kept entry, split turn, tokens before, computeFileLists of its file
// operations, how many messages it summarizes and the sha256 prefix of JSON.stringify of
// them, of the turn prefix and of the previous summary (the tests hash ours the same way).
// Our own script: it only calls pi's exported functions; the tests never run node.
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOOLS = process.env.PI15_TOOLS || resolve(HERE, "../../../../../shared/tools/pi15");
const { loadPi } = await import(join(TOOLS, "_pi15.mjs"));
const pi = await loadPi();
const { SessionManager } = pi;
const { prepareCompaction } = pi.compaction;
const { computeFileLists } = pi.cutils;

export const KEEPS = [20000, 1000, 200, 50];
const digest = (value) => createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);

const [outPath, ...files] = process.argv.slice(2);
if (!outPath || files.length === 0) {
	console.error("usage: node record_plans.mjs OUT.json FILE.jsonl ...");
	process.exit(2);
}
const out = { pi_version: pi.version, keeps: KEEPS, plans: {} };
for (const file of files) {
	const name = basename(file).replace(/\.jsonl$/, "");
	const scratch = mkdtempSync(join(tmpdir(), "pi15-plans-"));
	const copy = join(scratch, basename(file));
	copyFileSync(file, copy);
	const sm = SessionManager.open(copy, scratch);
	const rows = [];
	sm.getEntries().forEach((entry, position) => {
		const branch = sm.getBranch(entry.id);
		for (const k of KEEPS) {
			const plan = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: k });
			if (!plan) {
				rows.push({ position, k, plan: null });
				continue;
			}
			const { readFiles, modifiedFiles } = computeFileLists(plan.fileOps);
			rows.push({
				position,
				k,
				plan: {
					firstKeptPosition: sm.getEntries().findIndex((e) => e.id === plan.firstKeptEntryId),
					isSplitTurn: plan.isSplitTurn,
					tokensBefore: plan.tokensBefore,
					readFiles,
					modifiedFiles,
					summarize: digest(plan.messagesToSummarize),
					turnPrefix: digest(plan.turnPrefixMessages),
					summarizeCount: plan.messagesToSummarize.length,
					turnPrefixCount: plan.turnPrefixMessages.length,
					previousSummary: plan.previousSummary === undefined ? null : digest(plan.previousSummary),
				},
			});
		}
	});
	out.plans[name] = rows;
	rmSync(scratch, { recursive: true, force: true });
	console.error(`${name}: ${rows.length} plans`);
}
writeFileSync(outPath, `${JSON.stringify(out)}\n`);

// Write COUNT random sessions with pi 1.5.2's own SessionManager, for a randomised
// differential test of this library against pi (random_ours.py writes the other direction).
//
//   bash ../shared/tools/pi15/setup.sh      # once: pi 1.5.2's session layer in /tmp/pi15-peer
//   node tests/compat/golden/pi15/random_corpus.mjs OUT_DIR [COUNT=40] [SEED=1]
//
// Each session (30-150 entries, random-NNN.jsonl) mixes: user / assistant / tool-result
// messages (text, thinking, read/write/edit/bash/grep tool calls with paths, user images)
// and bash executions; a full system prompt (sections + tools) and later patches (sections
// replaced or removed with null, tools added, redefined or removed); context edits (null,
// a string, blocks; edits of edited entries; on several branches); usage entries of known
// and unknown kinds; compactions keeping from a random earlier path entry, a label on the
// path or an entry on another branch, retain-none, with or without usage and details;
// branch summaries to ancestors, entries on other branches or the root; labels set,
// changed and cleared; session names; model and thinking changes; custom messages and
// custom entries; moves to random earlier entries; failed assistant replies (stopReason
// "error", zero usage) each followed by the edit that omits it. Entry sizes range from a
// word to a few thousand words, so compaction planning cuts in different places; texts
// hold a few non-ASCII words (an emoji among them: two UTF-16 code units).
//
// Deterministic: the choices come from a PRNG seeded by SEED and the session's number,
// pi's ids and clock from makeDeterministic. Our own script: it only calls pi's public
// SessionManager API; the tests never run it (nor node).
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOOLS = process.env.PI15_TOOLS || resolve(HERE, "../../../../../shared/tools/pi15");
const { makeDeterministic, loadPi, advanceClock, seeded } = await import(join(TOOLS, "_pi15.mjs"));

const [outArg, countArg, seedArg] = process.argv.slice(2);
if (!outArg) {
	console.error("usage: node random_corpus.mjs OUT_DIR [COUNT] [SEED]");
	process.exit(2);
}
const COUNT = Number(countArg ?? 40);
const SEED = Number(seedArg ?? 1);
makeDeterministic({ seed: SEED, startIso: "2026-11-20T09:00:00.000Z", stepMs: 450 });
const { SessionManager } = await loadPi();

const out = resolve(outArg);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// --- random values --------------------------------------------------------------------

let rand;
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const chance = (p) => rand() < p;
const pick = (items) => items[Math.floor(rand() * items.length)];
/** One key of `weights` ({key: weight}), drawn in proportion to its weight. */
function weighted(weights) {
	const total = Object.values(weights).reduce((a, b) => a + b, 0);
	let r = rand() * total;
	for (const [key, w] of Object.entries(weights)) if ((r -= w) < 0) return key;
	return Object.keys(weights).at(-1);
}

const WORDS = ("the cache key module build test fails passes because config parser token stream " +
	"buffer request handler schema invoice billing migration index query retry timeout " +
	"worker queue lock file path branch commit review deploy release error warning value café naïve 数据 🚀").split(" ");
const PATHS = ["src/a.ts", "src/b.ts", "src/cache.ts", "src/db/schema.sql", "README.md", "package.json", "test/a.test.ts", "docs/notes.md"];
const IMAGE = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", mimeType: "image/png" };

function words(n) {
	const out = [];
	for (let i = 0; i < n; i++) out.push(pick(WORDS));
	return out.join(" ");
}
/** A text of a random size: mostly short, sometimes a few thousand words. */
function text(big) {
	const size = weighted({ tiny: 3, short: 6, medium: 3, long: big });
	const n = { tiny: int(1, 3), short: int(5, 40), medium: int(80, 300), long: int(600, 2500) }[size];
	return words(n) + ".";
}

// --- messages -------------------------------------------------------------------------

const now = () => Date.now();
const usage = (input, output, cacheRead = 0) => ({
	input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead,
	cost: { input: input / 1e6, output: output / 1e6, cacheRead: 0, cacheWrite: 0, total: (input + output) / 1e6 },
});
const tool = (name, description, props) => ({
	name, description, parameters: { type: "object", properties: Object.fromEntries(props.map((p) => [p, { type: "string" }])), required: props },
});
const TOOLS_ALL = [
	tool("read", "Read a file.", ["path"]),
	tool("write", "Write a file.", ["path", "content"]),
	tool("edit", "Edit a file.", ["path", "oldText", "newText"]),
	tool("bash", "Run a shell command.", ["command"]),
	tool("grep", "Search files.", ["pattern"]),
];
const SECTION_NAMES = ["preamble", "cwd", "style", "skills", "notes", "rules"];

function call(id) {
	const name = pick(["read", "read", "write", "edit", "bash", "grep"]);
	const path = pick(PATHS);
	const args = {
		read: { path },
		write: { path, content: words(int(3, 60)) },
		edit: { path, oldText: words(int(1, 5)), newText: words(int(1, 8)) },
		bash: { command: `cat ${path}` },
		grep: { pattern: pick(WORDS) },
	}[name];
	return { type: "toolCall", id, name, arguments: args };
}

// --- one session ----------------------------------------------------------------------

function randomSession(sm, big) {
	let callNo = 0;
	const target = int(30, 150);
	const labelled = new Set();
	const edited = [];
	const liveTools = new Set();

	const user = () => {
		const content = chance(0.15)
			? [{ type: "text", text: text(big) }, ...(chance(0.6) ? [IMAGE] : [])]
			: text(big);
		return sm.appendMessage({ role: "user", content, timestamp: now() });
	};
	const assistant = (calls) => {
		const blocks = [];
		if (chance(0.3)) blocks.push({ type: "thinking", thinking: text(big), thinkingSignature: `sig${int(1, 999)}` });
		if (calls.length === 0 || chance(0.5)) blocks.push({ type: "text", text: text(big) });
		blocks.push(...calls);
		const input = int(500, 60000);
		return sm.appendMessage({
			role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
			usage: chance(0.1) ? usage(0, 0) : usage(input, int(10, 900), chance(0.3) ? int(0, input) : 0),
			stopReason: calls.length ? "toolUse" : weighted({ stop: 20, aborted: 1, length: 1 }), timestamp: now(),
		});
	};
	const turn = () => {
		user();
		for (let round = int(0, 3); round > 0; round--) {
			const calls = Array.from({ length: int(1, 3) }, () => call(`toolu_${++callNo}`));
			assistant(calls);
			for (const c of calls) {
				if (chance(0.05)) continue; // a result that never came
				const content = [{ type: "text", text: text(big + 2) }, ...(chance(0.05) ? [IMAGE] : [])];
				sm.appendMessage({ role: "toolResult", toolCallId: c.id, toolName: c.name, content, isError: chance(0.1), timestamp: now() });
			}
		}
		if (chance(0.9)) assistant([]);
	};
	const failedReply = () => {
		if (chance(0.7)) user();
		const failed = sm.appendMessage({
			role: "assistant", content: chance(0.5) ? [] : [{ type: "text", text: "" }], api: "anthropic-messages",
			provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(0, 0), stopReason: "error",
			errorMessage: pick(["overloaded", "rate limited", "connection reset"]), timestamp: now(),
		});
		sm.appendContextEdit(failed, null);
		if (chance(0.5)) assistant([]);
	};
	const bashExecution = () => {
		const message = {
			role: "bashExecution", command: `cat ${pick(PATHS)}`, output: text(big + 1), exitCode: pick([0, 0, 1, undefined]),
			cancelled: chance(0.1), truncated: chance(0.1), timestamp: now(),
		};
		if (chance(0.3)) message.excludeFromContext = chance(0.5);
		sm.appendMessage(message);
	};
	const system = (first) => {
		const message = { role: "system", content: chance(first ? 0.3 : 0.2) ? text(0) : "", timestamp: now() };
		const sections = {};
		if (first) {
			for (const name of SECTION_NAMES) if (chance(0.6)) sections[name] = `${name}: ${text(big)}`;
		} else {
			for (let n = int(0, 3); n > 0; n--) sections[pick(SECTION_NAMES)] = chance(0.35) ? null : `${pick(WORDS)}: ${text(0)}`;
		}
		if (Object.keys(sections).length) message.sections = sections;
		const added = first
			? TOOLS_ALL.filter(() => chance(0.7))
			: TOOLS_ALL.filter(() => chance(0.2)).map((t) => (chance(0.5) ? { ...t, description: `${t.description} ${words(3)}` } : t));
		const removed = first ? [] : [...liveTools].filter(() => chance(0.25));
		if (added.length) message.toolsAdded = added;
		if (removed.length) message.toolsRemoved = removed.map((name) => ({ name }));
		for (const name of removed) liveTools.delete(name);
		for (const t of added) liveTools.add(t.name);
		sm.appendMessage(message);
	};
	const editable = () =>
		sm.getBranch().filter((e) => e.type === "custom_message" || (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));
	const contextEdit = () => {
		const onBranch = editable();
		if (onBranch.length === 0) return;
		const again = edited.filter((id) => onBranch.some((e) => e.id === id));
		const entry = again.length && chance(0.3) ? sm.getEntry(pick(again)) : pick(onBranch);
		const role = entry.type === "message" ? entry.message.role : "custom";
		const kind = weighted({ omit: 3, string: 4, blocks: 3 });
		let replacement = null;
		if (kind === "string") replacement = { content: chance(0.1) ? "" : text(0) };
		if (kind === "blocks") {
			const blocks = [{ type: "text", text: text(0) }];
			if ((role === "user" || role === "custom") && chance(0.3)) blocks.push(IMAGE);
			if (role === "assistant" && chance(0.3)) blocks.push(call(`toolu_${++callNo}`));
			replacement = { content: chance(0.05) ? [] : blocks };
		}
		sm.appendContextEdit(entry.id, replacement);
		edited.push(entry.id);
	};
	const offPath = (path) => {
		const onPath = new Set(path.map((e) => e.id));
		return sm.getEntries().filter((e) => !onPath.has(e.id));
	};
	const compaction = () => {
		const path = sm.getBranch();
		const kept = weighted({ none: 2, path: 6, label: 1, elsewhere: 1 });
		const pools = {
			none: [],
			path: path.slice(Math.floor(path.length / 3)),
			label: path.filter((e) => e.type === "label"),
			elsewhere: offPath(path),
		};
		const pool = pools[kept].length || kept === "none" ? pools[kept] : path;
		const firstKept = pool.length === 0 ? undefined : pick(pool).id;
		const details = chance(0.6)
			? { readFiles: PATHS.filter(() => chance(0.2)), modifiedFiles: PATHS.filter(() => chance(0.2)) }
			: undefined;
		const fromHook = pick([undefined, false, true]);
		const spent = chance(0.5) ? usage(int(1000, 9000), int(50, 900)) : undefined;
		sm.appendCompaction(`Summary: ${text(big)}`, firstKept, int(1000, 90000), details, fromHook, spent);
	};
	const branchSummary = () => {
		const path = sm.getBranch();
		const to = weighted({ root: 2, ancestor: 7, elsewhere: 1 });
		const pool = to === "root" ? [] : to === "elsewhere" && offPath(path).length ? offPath(path) : path;
		const target = pool.length === 0 ? null : pick(pool).id;
		const details = chance(0.5) ? { readFiles: PATHS.filter(() => chance(0.2)), modifiedFiles: [] } : undefined;
		const fromHook = pick([undefined, false, true]);
		const spent = chance(0.4) ? usage(int(100, 3000), int(10, 300)) : undefined;
		sm.branchWithSummary(target, `Branch summary: ${text(big)}`, details, fromHook, spent);
	};
	const label = () => {
		const all = sm.getEntries();
		if (all.length === 0) return;
		const path = sm.getBranch();
		const kind = labelled.size ? weighted({ set: 4, change: 2, clear: 2 }) : "set";
		const targetId = kind === "set" ? pick(chance(0.7) && path.length ? path : all).id : pick([...labelled]);
		const value = kind === "clear" ? pick(["", undefined]) : `${pick(WORDS)}-${int(1, 99)}`;
		sm.appendLabelChange(targetId, value);
		if (value) labelled.add(targetId);
		else labelled.delete(targetId);
	};
	const ops = {
		turn: 30, bashExecution: 2, failedReply: 3, system: 4, contextEdit: 9, usage: 4, compaction: 3, branchSummary: 2, label: 4,
		name: 1.5, model: 1.5, thinking: 1.5, customMessage: 3, customEntry: 1, branch: 4, resetLeaf: 0.2,
	};
	if (chance(0.9)) system(true);
	while (sm.getEntries().length < target) {
		switch (weighted(ops)) {
			case "turn": turn(); break;
			case "bashExecution": bashExecution(); break;
			case "failedReply": failedReply(); break;
			case "system": system(false); break;
			case "contextEdit": contextEdit(); break;
			case "usage":
				sm.appendUsage(pick(["cache_warm", "classifier", "title", "subagent", "x-new-kind"]), pick(["anthropic", "openai"]),
					pick(["claude-haiku-4-5", "gpt-5.1-mini"]), usage(int(0, 5000), int(0, 200), int(0, 50000)), chance(0.4) ? words(3) : undefined);
				break;
			case "compaction": compaction(); break;
			case "branchSummary": branchSummary(); break;
			case "label": label(); break;
			case "name": sm.appendSessionInfo(chance(0.15) ? "" : pick(["", "  ", "\n"]) + words(int(1, 4)) + pick(["", " \n", "\r\nmore"])); break;
			case "model": sm.appendModelChange(pick(["anthropic", "openai"]), pick(["claude-sonnet-4-5", "gpt-5.1", "claude-haiku-4-5"])); break;
			case "thinking": sm.appendThinkingLevelChange(pick(["off", "low", "medium", "high"])); break;
			case "customMessage":
				sm.appendCustomMessageEntry(pick(["notes", "reminder"]), chance(0.6) ? text(big) : [{ type: "text", text: text(0) }],
					chance(0.7), chance(0.3) ? { source: "ext" } : undefined);
				break;
			case "customEntry": sm.appendCustomEntry("ext-state", { n: int(1, 9) }); break;
			case "branch": if (sm.getEntries().length) sm.branch(pick(sm.getEntries()).id); break;
			case "resetLeaf": sm.resetLeaf(); break;
		}
	}
}

// --- the corpus -----------------------------------------------------------------------

for (let i = 0; i < COUNT; i++) {
	rand = seeded((SEED * 1000003 + i) >>> 0);
	const name = `random-${String(i).padStart(3, "0")}`;
	const folder = join(out, `.tmp-${name}`);
	mkdirSync(folder, { recursive: true });
	const sm = SessionManager.create("/home/dev/app", folder);
	randomSession(sm, pick([0, 0.5, 2]));
	const [file] = readdirSync(folder);
	renameSync(join(folder, file), join(out, `${name}.jsonl`));
	rmSync(folder, { recursive: true });
	advanceClock(60_000);
	console.log(`${name}: ${sm.getEntries().length} entries`);
}

// Write the pi 1.5 corpus (tests/compat/golden/pi15/corpus/) with pi 1.5.2's own
// SessionManager, deterministically: system prompts and patches, context edits on several
// branches, usage entries, compactions with checkpoints and usage, a retain-none and a
// nested compaction, branch summaries with usage, null contents, a custom session id.
//
//   bash ../shared/tools/pi15/setup.sh      # once: pi 1.5.2's session layer in /tmp/pi15-peer
//   node tests/compat/golden/pi15/write_corpus.mjs OUT_DIR
//
// Our own script: it only calls pi's public SessionManager API. The tests never run it
// (nor node); they read the corpus and what pi recorded for it (see README.md there).
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOOLS = process.env.PI15_TOOLS || resolve(HERE, "../../../../../shared/tools/pi15");
const { makeDeterministic, loadPi, advanceClock } = await import(join(TOOLS, "_pi15.mjs"));
makeDeterministic({ seed: 15, startIso: "2026-11-12T09:00:00.000Z", stepMs: 700 });
const pi = await loadPi();
const { SessionManager } = pi;

const out = resolve(process.argv[2] || "corpus");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

let ms = Date.parse("2026-11-12T09:00:00.000Z");
const now = () => (ms += 1300);
const cost = (i, o) => ({ input: i / 1e6, output: o / 1e6, cacheRead: 0, cacheWrite: 0, total: (i + o) / 1e6 });
const usage = (i, o, cacheRead = 0) => ({
	input: i, output: o, cacheRead, cacheWrite: 0, totalTokens: i + o + cacheRead, cost: cost(i, o),
});
const TOOL_READ = { name: "read", description: "Read a file from the workspace.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };
const TOOL_WRITE = { name: "write", description: "Write a file.", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] } };
const TOOL_BASH = { name: "bash", description: "Run a shell command.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } };
const TOOL_GREP = { name: "grep", description: "Search files for a pattern.", parameters: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] } };

const system = (fields) => ({ role: "system", content: "", ...fields, timestamp: now() });
const user = (content) => ({ role: "user", content, timestamp: now() });
const assistant = (content, extra = {}) => {
	const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
	const calls = blocks.some((b) => b.type === "toolCall");
	return {
		role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic",
		model: "claude-sonnet-4-5", usage: usage(1200 + blocks.length * 37, 90), stopReason: calls ? "toolUse" : "stop",
		...extra, timestamp: now(),
	};
};
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (id, name, text, isError = false) => ({
	role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError, timestamp: now(),
});
const firstPrompt = () => system({
	sections: { preamble: "You are a careful coding agent.", cwd: "Working directory: /home/dev/app", style: "Answer briefly." },
	toolsAdded: [TOOL_READ, TOOL_WRITE, TOOL_BASH],
});

function session(name, build, options) {
	const folder = join(out, ".tmp-" + name);
	mkdirSync(folder, { recursive: true });
	const sm = SessionManager.create("/home/dev/app", folder, options);
	build(sm);
	const [file] = readdirSync(folder);
	renameSync(join(folder, file), join(out, `${name}.jsonl`));
	rmSync(folder, { recursive: true });
	advanceClock(60_000);
}

session("prompt-and-tools", (sm) => {
	sm.appendMessage(firstPrompt());
	sm.appendMessage(user("Read package.json and tell me the test command."));
	sm.appendMessage(assistant([call("toolu_01", "read", { path: "package.json" })], { thinkingLevel: "medium" }));
	sm.appendMessage(result("toolu_01", "read", '{"scripts":{"test":"vitest run"}}'));
	sm.appendMessage(assistant("The test command is `vitest run`.", { thinkingLevel: "medium" }));
	sm.appendMessage(system({ sections: { skills: "<skills>\n- testing\n</skills>", style: null }, toolsRemoved: [{ name: "write" }], toolsAdded: [TOOL_GREP] }));
	sm.appendThinkingLevelChange("high");
	sm.appendMessage(user("Find every TODO."));
	sm.appendMessage(assistant([call("toolu_02", "grep", { pattern: "TODO" })], { thinkingLevel: "high" }));
	sm.appendMessage(result("toolu_02", "grep", "src/a.ts:3: // TODO: cache"));
	sm.appendMessage(assistant("One TODO, in src/a.ts line 3.", { thinkingLevel: "high" }));
	sm.appendModelChange("openai", "gpt-5.1");
	sm.appendMessage(system({ content: "Never run destructive commands.", toolsAdded: [{ ...TOOL_BASH, description: "Run a safe shell command." }], toolsRemoved: [{ name: "bash" }] }));
	sm.appendMessage(user("Thanks."));
	sm.appendMessage({ ...assistant("You are welcome."), api: "openai-responses", provider: "openai", model: "gpt-5.1" });
	sm.appendSessionInfo("Prompt and tools");
});

session("context-edits", (sm) => {
	sm.appendMessage(firstPrompt());
	const u1 = sm.appendMessage(user("Show me the build log."));
	const a1 = sm.appendMessage(assistant([{ type: "text", text: "Reading it." }, call("toolu_11", "bash", { command: "cat build.log" })]));
	const t1 = sm.appendMessage(result("toolu_11", "bash", "x".repeat(4000) + "\nBUILD FAILED: missing module 'left-pad'"));
	const a2 = sm.appendMessage(assistant("The build fails because 'left-pad' is missing."));
	const c1 = sm.appendCustomMessageEntry("notes", "Reminder: the CI uses node 20.", true, { source: "ext" });
	sm.appendContextEdit(t1, { content: "[build log elided: ends with BUILD FAILED: missing module 'left-pad']" });
	sm.appendContextEdit(c1, null);
	sm.appendLabelChange(a2, "diagnosis");
	const fork = sm.getLeafId();
	sm.appendMessage(user("Install it."));
	sm.appendContextEdit(u1, { content: "Show me the end of the build log." });
	sm.appendContextEdit(u1, { content: [{ type: "text", text: "Show me only the failing line of the build log." }] });
	sm.appendMessage(assistant("Run `npm install left-pad`."));
	// another branch from the same point: the edits above are not on it
	sm.branch(fork);
	sm.appendContextEdit(a1, { content: "I read the build log." });
	sm.appendMessage(user("Why did it fail?"));
	sm.appendContextEdit(t1, null);
	sm.appendMessage(assistant("A dependency is missing."));
	// before any edit: the original contributions again
	sm.branch(a2);
	sm.appendMessage(user("Start over."));
	sm.appendMessage(assistant("Starting over."));
});

session("usage-entries", (sm) => {
	sm.appendMessage(firstPrompt());
	sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 0, 50000));
	sm.appendMessage(user("Classify this request."));
	sm.appendUsage("classifier", "openai", "gpt-5.1-mini", usage(300, 12), "routing");
	sm.appendMessage(assistant("It is a bug report."));
	sm.appendUsage("something-new", "anthropic", "claude-haiku-4-5", usage(40, 8));
	sm.appendMessage(user("And this one?"));
	sm.appendMessage(assistant("A feature request."));
});

session("compaction-checkpoints", (sm) => {
	sm.appendMessage(firstPrompt());
	let firstKept;
	for (let i = 1; i <= 4; i++) {
		const id = sm.appendMessage(user(`Step ${i}: change module ${i}.`));
		if (i === 3) firstKept = id;
		sm.appendMessage(assistant([call(`toolu_2${i}`, "write", { path: `src/m${i}.ts`, content: `export const m${i} = ${i};` })]));
		sm.appendMessage(result(`toolu_2${i}`, "write", `wrote src/m${i}.ts`));
		sm.appendMessage(assistant(`Module ${i} changed.`));
		if (i === 3) sm.appendMessage(system({ sections: { notes: "Modules are numbered." }, toolsAdded: [TOOL_GREP] }));
	}
	// keeps from step 3: the system patch inside the kept range gives way to the checkpoint
	sm.appendCompaction("Steps 1 and 2 changed modules 1 and 2.", firstKept, 9000, { readFiles: [], modifiedFiles: ["src/m1.ts", "src/m2.ts"] }, false, usage(5000, 400));
	const afterFirst = sm.appendMessage(user("Step 5: run the tests."));
	sm.appendMessage(assistant("All tests pass."));
	// retain-none: no firstKeptEntryId given, so the entry names itself
	sm.appendCompaction("Modules 1-4 changed; tests pass.", undefined, 12000, undefined, false, usage(6000, 300));
	sm.appendMessage(user("Step 6: tidy up."));
	sm.appendMessage(assistant("Tidied."));
	sm.appendMessage(system({ sections: { preamble: "You are a careful, terse coding agent." } }));
	// keeps from before the previous compaction: that one stays as an entry but adds nothing
	sm.appendCompaction("Everything up to the tidy-up.", afterFirst, 14000, undefined, true);
	sm.appendMessage(user("Step 7: release."));
	sm.appendMessage(assistant("Released."));
});

session("branch-summaries", (sm) => {
	sm.appendMessage(firstPrompt());
	const u1 = sm.appendMessage(user("Try approach A."));
	sm.appendMessage(assistant("Approach A written."));
	sm.appendMessage(user("It is too slow."));
	sm.appendMessage(assistant("Approach A is slow on big inputs."));
	sm.branchWithSummary(u1, "Approach A worked but was slow on big inputs.", { readFiles: ["src/a.ts"], modifiedFiles: [] }, false, usage(800, 60));
	sm.appendMessage(user("Try approach B."));
	sm.appendMessage(assistant("Approach B is fast."));
	sm.branchWithSummary(null, "Both approaches explored; B is fast.", undefined, true);
	sm.appendMessage(user("Write the summary for the team."));
	sm.appendMessage(assistant("Summary written."));
});

session("null-contents", (sm) => {
	sm.appendMessage({ role: "system", content: null, sections: { preamble: "Be helpful." }, timestamp: now() });
	sm.appendMessage({ role: "user", content: null, timestamp: now() });
	sm.appendMessage({ ...assistant("x"), content: null });
	sm.appendMessage({ role: "toolResult", toolCallId: "call_9", toolName: "read", content: null, isError: false, timestamp: now() });
	sm.appendCustomMessageEntry("empty", null, false);
	sm.appendMessage(user("Still here?"));
	sm.appendMessage(assistant("Yes."));
}, { id: "custom-id.null-contents_1" });

session("planning-cases", (sm) => {
	sm.appendMessage(firstPrompt());
	const words = (topic, n) => Array.from({ length: n }, (_, i) => `${topic} note ${i}.`).join(" ");
	sm.appendMessage(user("Plan the migration of the billing module. " + words("billing", 60)));
	sm.appendMessage(assistant("Here is the plan. " + words("plan", 80)));
	sm.appendCustomMessageEntry("reminder", "The billing team reviews every change. " + words("review", 40), true);
	sm.appendMessage(user([{ type: "text", text: "This is the current schema." }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }]));
	sm.appendMessage(assistant([call("toolu_41", "script", { code: "read + write" })]));
	sm.appendMessage({
		...result("toolu_41", "script", "ran 2 calls: " + words("script", 30)),
		nestedCalls: { calls: [{ name: "read", arguments: { path: "src/billing/schema.sql" } }, { name: "write", arguments: { path: "src/billing/v2.sql" } }] },
	});
	sm.appendMessage(assistant("The schema is migrated to v2. " + words("done", 50)));
	const beforeFailure = sm.getLeafId();
	// a failed attempt, then the edit that omits it from the context (pi's recovery)
	const question = sm.appendMessage(user("Now migrate the invoices. " + words("invoice", 40)));
	const failed = sm.appendMessage(assistant("", { stopReason: "error", errorMessage: "overloaded", usage: usage(0, 0) }));
	sm.appendContextEdit(failed, null);
	// the same, with an edit of an earlier entry after the failure: the cut does not move
	sm.branch(failed);
	sm.appendContextEdit(question, { content: "Migrate the invoices. " + words("edited", 30) });
	sm.appendContextEdit(failed, null);
	// a retry that worked, after the omission
	sm.branch(beforeFailure);
	sm.appendMessage(user("Migrate the invoices, please. " + words("retry", 40)));
	const second = sm.appendMessage(assistant("", { stopReason: "error", errorMessage: "overloaded", usage: usage(0, 0) }));
	sm.appendContextEdit(second, null);
	sm.appendMessage(assistant("Invoices migrated. " + words("invoices", 40)));
});

session("fork-cases", (sm) => {
	sm.appendMessage(firstPrompt());
	const u1 = sm.appendMessage(user("Set up the project."));
	const a1 = sm.appendMessage(assistant("Project set up."));
	sm.appendLabelChange(a1, "setup");
	const kept = sm.appendLabelChange(u1, "start");
	sm.appendLabelChange(a1, ""); // removed, then set again: it is now the newest label
	sm.appendLabelChange(a1, "setup done");
	sm.appendMessage(user("Add a README."));
	const a2 = sm.appendMessage(assistant("README added."));
	// a compaction that keeps from a label entry: a fork keeps from the entry after it
	sm.appendCompaction("Set up the project.", kept, 3000, { readFiles: [], modifiedFiles: [] }, false);
	sm.appendMessage(user("Add a licence."));
	const a3 = sm.appendMessage(assistant("Licence added."));
	sm.appendLabelChange(a3, "licence");
	// a side branch whose label is not on the main path
	sm.branch(a2);
	const side = sm.appendMessage(user("Or add a changelog?"));
	sm.appendLabelChange(side, "side");
	sm.appendMessage(assistant("Changelog added."));
	sm.branch(a3);
	sm.appendMessage(user("Done for today."));
	sm.appendMessage(assistant("See you."));
});

console.log(readdirSync(out).sort().join("\n"));

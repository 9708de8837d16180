// Summarises one leg of the MCP conformance suite from its output folder
// (one server-<scenario>-<timestamp>/checks.json per scenario) and, for a
// --requirements leg, the referee's log (its "Not scored" list):
//
//   node summary.js LEG RESULTS_DIR LOG
//
// Prints the scenarios and checks that passed, then every WARNING and
// FAILURE with its message. Counts follow the referee: a check passed when
// its status is SUCCESS; WARNING, SKIPPED and INFO never fail a scenario.
"use strict";
const fs = require("fs");
const path = require("path");

const [leg, dir, log] = process.argv.slice(2);
const notScored = new Map(); // scenario -> reason
if (log && fs.existsSync(log)) {
	let inList = false;
	for (const line of fs.readFileSync(log, "utf8").split("\n")) {
		if (/^Not scored for /.test(line)) {
			inList = true;
			continue;
		}
		const m = inList && /^\s+[✓✗]\s+(\S+)\s+\((.*)\)\s*$/.exec(line);
		if (m) notScored.set(m[1], m[2]);
		else if (inList && line.trim() === "") inList = false;
	}
}

const scenarios = [];
for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
	const file = path.join(dir, entry, "checks.json");
	if (!fs.existsSync(file)) continue;
	const name = entry.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
	scenarios.push({ name, checks: JSON.parse(fs.readFileSync(file, "utf8")) });
}

const tally = (list) => {
	const t = { scenarios: 0, passed: 0, checks: 0, success: 0, warning: 0, failure: 0 };
	for (const s of list) {
		t.scenarios++;
		let failed = false;
		for (const c of s.checks) {
			if (c.status === "SUCCESS") t.success++;
			else if (c.status === "WARNING") t.warning++;
			else if (c.status === "FAILURE") (t.failure++, (failed = true));
			else continue;
			t.checks++;
		}
		if (!failed) t.passed++;
	}
	return t;
};
const line = (label, t) =>
	`${label}: ${t.passed}/${t.scenarios} scenarios passed, ${t.success}/${t.checks} checks passed, ` +
	`${t.warning} warnings, ${t.failure} failures`;

const scored = scenarios.filter((s) => !notScored.has(s.name));
console.log(line(leg + (notScored.size ? " (scored)" : ""), tally(scored)));
if (notScored.size) {
	const extra = scenarios.filter((s) => notScored.has(s.name));
	console.log(line(leg + " (not scored)", tally(extra)));
	for (const s of extra) {
		const failed = s.checks.some((c) => c.status === "FAILURE");
		console.log(`  not scored: ${s.name} (${notScored.get(s.name)}): ${failed ? "fails" : "passes"}`);
	}
}
for (const s of scenarios) {
	if (notScored.has(s.name)) continue;
	for (const c of s.checks) {
		if (c.status === "WARNING" || c.status === "FAILURE") {
			console.log(`  ${c.status} ${s.name} ${c.id}: ${c.errorMessage || c.description || ""}`);
		}
	}
}
if (scenarios.length === 0) {
	console.log(`  no results in ${dir}`);
	process.exit(1);
}

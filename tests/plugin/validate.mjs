// Checks the Claude Code plugin marketplace of this repository against the format Claude Code
// documents, and every `ipybox` command line in it against the real binary's flags.
//
// Format followed (code.claude.com):
//   docs/en/plugins/marketplace-reference  marketplace.json: name, owner.name, plugins[] with
//                                          name + source ("./…" inside the repo), strict,
//                                          component fields (mcpServers) in an entry
//   docs/en/plugins/manifest-reference     plugin.json fields, .mcp.json, standard layout,
//                                          ${CLAUDE_PLUGIN_ROOT} and the other variables
//   skills page (SKILL.md)                 frontmatter name (a-z, 0-9, hyphens, <= 64 chars,
//                                          the folder's name) and description (<= 1024 chars)
//
// Usage: node tests/plugin/validate.mjs [IPYBOX_BINARY] (default target/debug/ipybox)
// After checking the repository it checks broken copies, each of which must fail.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const binary = path.resolve(repo, process.argv[2] ?? "target/debug/ipybox");

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;

// Flags of `ipybox mcp`, read from its --help: name -> whether it takes a value.
function mcpFlags() {
  const help = execFileSync(binary, ["mcp", "--help"], { encoding: "utf8" });
  const flags = new Map();
  for (const line of help.split("\n")) {
    const m = line.match(/^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)(?: <([A-Z_]+)>)?/);
    if (m) flags.set(m[1], m[2] !== undefined);
  }
  if (!flags.has("--sandbox") || !flags.has("--approval")) {
    throw new Error(`could not read the flags of ${binary} mcp --help`);
  }
  // The approval modes are the back-quoted words of --approval's help (`auto`, `rules`, ...),
  // up to the sentence naming the one it lacks (`ask`).
  const approval = (help.split("\n").find((l) => /^\s+--approval /.test(l)) ?? "").split("There is no")[0];
  flags.approvalModes = new Set([...approval.matchAll(/`([a-z]+)`/g)].map((m) => m[1]));
  return flags;
}

function validate(root, flags) {
  const errors = [];
  const fail = (where, what) => errors.push(`${where}: ${what}`);
  const isStr = (v) => typeof v === "string" && v.length > 0;
  const readJson = (file) => {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
      fail(path.relative(root, file), `not readable JSON (${e.message})`);
      return undefined;
    }
  };

  function checkIpyboxArgs(where, args) {
    if (args[0] !== "mcp") return fail(where, `ipybox must be started as \`ipybox mcp\`, got ${JSON.stringify(args)}`);
    for (const arg of args) {
      // ${PWD} (the Python ipybox's plugins) is not among the variables Claude Code documents;
      // ipybox's workspace defaults to the directory Claude Code starts it in.
      if (arg.includes("${")) fail(where, `${arg}: a variable in ipybox's arguments`);
    }
    for (let i = 1; i < args.length; i++) {
      const arg = args[i];
      const flag = arg.split("=")[0];
      if (!flags.has(flag)) {
        fail(where, `${arg} is not a flag of \`ipybox mcp\``);
        continue;
      }
      if (flag === "--approval") {
        const mode = args[++i];
        if (!flags.approvalModes.has(mode)) fail(where, `--approval ${mode}: unknown mode`);
        if (mode === "rules") i++;
      } else if (flag === "--sandbox-config") {
        // A plugin runs in every project it is enabled in: a policy file's path would be
        // someone's machine, and ipybox exits when the file is missing. `workspace` is the
        // project's own sandbox-config.json (the default policy while it has none).
        const value = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[++i];
        if (value !== "workspace") fail(where, `--sandbox-config ${value}: plugins use --sandbox-config workspace (the project's sandbox-config.json) or --sandbox, never a file`);
      } else if (flags.get(flag) && !arg.includes("=")) {
        if (args[++i] === undefined) fail(where, `${flag} needs a value`);
      }
    }
  }

  function checkMcpServers(where, servers) {
    if (servers === null || typeof servers !== "object" || Array.isArray(servers)) {
      return fail(where, "mcpServers must be an object of servers");
    }
    for (const [name, server] of Object.entries(servers)) {
      const at = `${where}.${name}`;
      if (!isStr(server?.command) && !isStr(server?.url)) { fail(at, "a server needs `command` (stdio) or `url`"); continue; }
      if (server.args !== undefined && !(Array.isArray(server.args) && server.args.every((a) => typeof a === "string"))) {
        fail(at, "args must be an array of strings");
        continue;
      }
      if (server.command === "ipybox") checkIpyboxArgs(at, server.args ?? []);
    }
  }

  function checkSkills(where, dir) {
    const skills = path.join(dir, "skills");
    if (!fs.existsSync(skills)) return 0;
    let count = 0;
    for (const name of fs.readdirSync(skills)) {
      const file = path.join(skills, name, "SKILL.md");
      const at = `${where} skills/${name}`;
      if (!fs.existsSync(file)) { fail(at, "no SKILL.md"); continue; }
      count++;
      const text = fs.readFileSync(file, "utf8");
      const m = text.match(/^---\n([\s\S]*?)\n---\n/);
      if (!m) { fail(at, "SKILL.md must start with YAML frontmatter between --- lines"); continue; }
      const fm = {};
      for (const line of m[1].split("\n")) {
        const kv = line.match(/^([a-z][a-z0-9-]*):\s*(.*)$/);
        if (kv) fm[kv[1]] = kv[2].trim();
      }
      if (!isStr(fm.name) || fm.name.length > 64 || !KEBAB.test(fm.name)) fail(at, `frontmatter name ${JSON.stringify(fm.name)}: lowercase letters, digits and hyphens, at most 64`);
      else if (fm.name !== name) fail(at, `frontmatter name ${fm.name} differs from its folder`);
      if (!isStr(fm.description) || fm.description.length > 1024) fail(at, "frontmatter description: 1 to 1024 characters");
      for (const link of text.matchAll(/\]\(([^)#]+)\)/g)) {
        if (/^[a-z]+:/.test(link[1])) continue;
        if (!fs.existsSync(path.join(skills, name, link[1]))) fail(at, `links to ${link[1]}, which does not exist`);
      }
    }
    return count;
  }

  const marketplaceFile = path.join(root, ".claude-plugin", "marketplace.json");
  const market = readJson(marketplaceFile);
  if (market === undefined) return errors;
  if (!isStr(market.name) || !KEBAB.test(market.name)) fail("marketplace", "name must be kebab-case");
  if (!isStr(market.owner?.name)) fail("marketplace", "owner.name is required");
  if (!Array.isArray(market.plugins) || market.plugins.length === 0) {
    fail("marketplace", "plugins must be a non-empty array");
    return errors;
  }
  const seen = new Set();
  for (const [i, entry] of market.plugins.entries()) {
    const where = `plugins[${i}] ${entry?.name ?? ""}`.trim();
    if (!isStr(entry?.name) || !KEBAB.test(entry.name)) fail(where, "name must be kebab-case");
    else if (seen.has(entry.name)) fail(where, "duplicate plugin name");
    seen.add(entry?.name);
    for (const key of ["description", "version"]) {
      if (entry[key] !== undefined && !isStr(entry[key])) fail(where, `${key} must be a string`);
    }
    if (entry.keywords !== undefined && !(Array.isArray(entry.keywords) && entry.keywords.every(isStr))) fail(where, "keywords must be strings");
    if (entry.strict !== undefined && typeof entry.strict !== "boolean") fail(where, "strict must be a boolean");
    if (!isStr(entry.source) || !entry.source.startsWith("./")) { fail(where, "source must be a relative path starting with ./"); continue; }
    const dir = path.resolve(root, entry.source);
    if (!dir.startsWith(root + path.sep) || !fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
      fail(where, `source ${entry.source} is not a folder inside the marketplace`);
      continue;
    }
    let servers = 0;
    if (entry.mcpServers !== undefined) { checkMcpServers(`${where} mcpServers`, entry.mcpServers); servers++; }
    const manifestFile = path.join(dir, ".claude-plugin", "plugin.json");
    if (fs.existsSync(manifestFile)) {
      if (entry.strict === false) fail(where, "strict: false entries are the whole definition; the folder must not also have plugin.json");
      const manifest = readJson(manifestFile);
      if (manifest && (!isStr(manifest.name) || !KEBAB.test(manifest.name))) fail(`${where} plugin.json`, "name must be kebab-case");
      if (manifest?.mcpServers !== undefined && typeof manifest.mcpServers === "object") { checkMcpServers(`${where} plugin.json mcpServers`, manifest.mcpServers); servers++; }
    }
    const mcpFile = path.join(dir, ".mcp.json");
    if (fs.existsSync(mcpFile)) {
      const mcp = readJson(mcpFile);
      if (mcp) { checkMcpServers(`${where} .mcp.json`, mcp.mcpServers ?? mcp); servers++; }
    }
    if (servers === 0) fail(where, "declares no MCP server (entry mcpServers, plugin.json or .mcp.json)");
    if (checkSkills(where, dir) === 0) fail(where, "ships no skill");
  }
  return errors;
}

const flags = mcpFlags();
const errors = validate(repo, flags);
if (errors.length > 0) {
  console.error(`plugin marketplace: ${errors.length} problem(s)\n  ${errors.join("\n  ")}`);
  process.exit(1);
}

// A validator that cannot fail proves nothing: each of these broken copies must be refused.
const mutations = {
  "an invented ipybox flag": (m) => { m.plugins[0].mcpServers.ipybox.args.push("--no-such-flag"); },
  "a missing owner": (m) => { delete m.owner; },
  "a source that does not exist": (m) => { m.plugins[1].source = "./no-such-plugin"; },
  "a plugin name that is not kebab-case": (m) => { m.plugins[2].name = "Codeact_Desktop"; },
  "an undocumented variable": (m) => { m.plugins[0].mcpServers.ipybox.args.push("--workspace", "${PWD}"); },
  "a policy file's path": (m) => { m.plugins[1].mcpServers.ipybox.args = ["mcp", "--sandbox-config", "policy.json"]; },
  "a broken skill": "skill",
};
for (const [what, mutate] of Object.entries(mutations)) {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "ipybox-plugin-"));
  try {
    fs.cpSync(path.join(repo, ".claude-plugin"), path.join(copy, ".claude-plugin"), { recursive: true });
    fs.cpSync(path.join(repo, "plugin"), path.join(copy, "plugin"), { recursive: true });
    const file = path.join(copy, ".claude-plugin", "marketplace.json");
    if (mutate === "skill") {
      const skill = path.join(copy, "plugin", "skills", "codeact", "SKILL.md");
      fs.writeFileSync(skill, fs.readFileSync(skill, "utf8").replace(/^name: .*$/m, "name: CodeAct"));
    } else {
      const m = JSON.parse(fs.readFileSync(file, "utf8"));
      mutate(m);
      fs.writeFileSync(file, JSON.stringify(m));
    }
    const refused = validate(copy, flags);
    if (process.env.VERBOSE) console.log(`${what}: ${refused.join("; ")}`);
    if (refused.length === 0) {
      console.error(`plugin marketplace: the validator accepted a copy with ${what}`);
      process.exit(1);
    }
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}
console.log(`plugin marketplace: ${JSON.parse(fs.readFileSync(path.join(repo, ".claude-plugin", "marketplace.json"), "utf8")).plugins.length} plugins valid; ${Object.keys(mutations).length} broken copies refused`);

// Print, as JSON, each named program's Fig spec reduced to what the catalogue declares by hand:
// the options that take a value, the options that do not, and the subcommand tree.
// Usage: node extract.mjs PACKAGE_DIR NAME...   (PACKAGE_DIR: an unpacked @withfig/autocomplete)
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const names = process.argv.slice(3);
const MAX_DEPTH = 6;

const asList = (name) => (Array.isArray(name) ? name : name ? [name] : []);

async function load(path) {
  if (!existsSync(path)) return null;
  try {
    return (await import(pathToFileURL(path).href)).default;
  } catch {
    return null;
  }
}

// An option takes the next word only if its argument is required and not glued with `=`.
function takesValue(option) {
  const args = option.args;
  if (!args || (Array.isArray(args) && args.length === 0)) return false;
  const first = Array.isArray(args) ? args[0] : args;
  return !first.isOptional && !option.requiresEquals && !option.requiresSeparator;
}

async function reduce(spec, depth, inherited) {
  if (typeof spec === "function") {
    try {
      spec = spec();
    } catch {
      return null;
    }
  }
  if (!spec || depth > MAX_DEPTH) return null;
  if (typeof spec.loadSpec === "string" && !spec.subcommands) {
    const loaded = await load(`${root}/build/${spec.loadSpec}.js`);
    if (loaded) spec = { ...loaded, ...spec, subcommands: loaded.subcommands, options: loaded.options };
  }
  const values = new Set(inherited);
  const flags = new Set();
  const persistent = new Set(inherited);
  for (const option of spec.options || []) {
    for (const name of asList(option.name)) {
      if (takesValue(option)) {
        values.add(name);
        if (option.isPersistent) persistent.add(name);
      } else {
        flags.add(name);
      }
    }
  }
  const out = { value_options: [...values].sort(), flags: [...flags].sort(), subcommands: {} };
  for (const sub of spec.subcommands || []) {
    const reduced = await reduce(sub, depth + 1, persistent);
    if (reduced) out.subcommands[asList(sub.name).join("|")] = reduced;
  }
  return out;
}

const result = {};
for (const name of names) {
  const spec = await load(`${root}/build/${name}.js`);
  if (spec) result[name] = await reduce(spec, 0, []);
}
console.log(JSON.stringify(result));

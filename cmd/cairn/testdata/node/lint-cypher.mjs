// lint-cypher.mjs - check Cypher files with Neo4j's own Cypher front end
// (@neo4j-cypher/language-support: the parser and semantic analysis of
// Neo4j, offline), against a schema, so that a misspelt label,
// relationship type, property key or parameter is a diagnostic too.
//
//   node lint-cypher.mjs SCHEMA.json FILE.cypher...
//
// SCHEMA.json is the package's DbSchema: {labels, relationshipTypes,
// propertyKeys, parameters: {name: example value}}. A file may hold several
// statements separated by semicolons. Prints one JSON object on stdout:
// {"files": N, "diagnostics": [{file, line, column, severity, message}]}
// (line and column 1-based, severity "error", "warning", "information" or
// "hint"). lintCypherQuery does not check the property keys of map
// projections (e {.name}) nor those a SET or CREATE writes, nor the labels a
// SET adds; so every token that the package's own highlighter classes as a
// property key or a label is checked against the schema as well, and one
// that is not in it is an error too. Exit status 0 whether or not there are diagnostics (the caller
// decides), 2 on a usage or read error.
import { readFileSync } from 'node:fs';
import { highlightSyntax, lintCypherQuery } from '@neo4j-cypher/language-support';

const [schemaPath, ...files] = process.argv.slice(2);
if (!schemaPath || files.length === 0) {
  process.stderr.write('usage: node lint-cypher.mjs SCHEMA.json FILE.cypher...\n');
  process.exit(2);
}

const severities = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };
let schema;
try {
  schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
} catch (err) {
  process.stderr.write(`lint-cypher: schema ${schemaPath}: ${err.message}\n`);
  process.exit(2);
}

const diagnostics = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`lint-cypher: ${file}: ${err.message}\n`);
    process.exit(2);
  }
  const { diagnostics: found } = lintCypherQuery(text, schema);
  const known = {
    property: new Set(schema.propertyKeys ?? []),
    label: new Set([...(schema.labels ?? []), ...(schema.relationshipTypes ?? [])]),
  };
  for (const tok of highlightSyntax(text)) {
    const names = known[tok.tokenType];
    if (!names || names.size === 0 || names.has(tok.token)) continue;
    found.push({
      range: { start: { line: tok.position.line, character: tok.position.startCharacter } },
      severity: 1,
      message: `${tok.tokenType === 'label' ? 'label or relationship type' : 'property key'} ${tok.token} is not in the schema`,
    });
  }
  for (const d of found) {
    diagnostics.push({
      file,
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
      severity: severities[d.severity] ?? String(d.severity),
      message: d.message,
    });
  }
}
process.stdout.write(JSON.stringify({ files: files.length, diagnostics }) + '\n');

// The ES module entry: `import cassandra from 'weir-cql'` gives the same object as
// `require('weir-cql')`, and its top-level names are also named exports. There is one
// implementation (index.js), so a program that mixes import and require shares its state.
import { createRequire } from 'node:module';

const cassandra = createRequire(import.meta.url)('./index.js');

export default cassandra;
export const {
  Client,
  ExecutionProfile,
  types,
  policies,
  mapping,
  auth,
  errors,
  concurrent,
  codec,
  version,
} = cassandra;

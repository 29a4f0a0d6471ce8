// A program written against cassandra-driver 4.x's typings, unchanged: `cassandra-driver`
// resolves to weir-cql's index.d.ts (tsconfig.json paths), and `tsc --noEmit` must accept it
// (test/unit/typescript.test.js). It is type-checked only, never run.
import * as fs from 'fs';
import cassandra, { Client, ExecutionProfile, auth, errors, mapping, policies, types } from 'cassandra-driver';

const { DCAwareRoundRobinPolicy, TokenAwarePolicy } = policies.loadBalancing;

const client = new Client({
  contactPoints: ['10.0.0.1', '10.0.0.2'],
  localDataCenter: 'datacenter1',
  keyspace: 'shop',
  authProvider: new auth.PlainTextAuthProvider('app', 'secret'),
  sslOptions: { ca: [fs.readFileSync('ca.pem')], rejectUnauthorized: true },
  policies: {
    loadBalancing: new TokenAwarePolicy(new DCAwareRoundRobinPolicy('datacenter1')),
    retry: new policies.retry.RetryPolicy(),
    speculativeExecution: new policies.speculativeExecution.ConstantSpeculativeExecutionPolicy(100, 2),
    timestampGeneration: new policies.timestampGeneration.MonotonicTimestampGenerator(),
  },
  pooling: { coreConnectionsPerHost: { [types.distance.local]: 2 }, heartBeatInterval: 30000 },
  socketOptions: { connectTimeout: 5000, readTimeout: 12000 },
  queryOptions: { consistency: types.consistencies.localQuorum, prepare: true },
  profiles: [new ExecutionProfile('reporting', { consistency: types.consistencies.one, readTimeout: 60000 })],
});

client.on('log', (level: string, className: string, message: string) => {
  if (level === 'error') console.error(className, message);
});
client.on('hostDown', (host: cassandra.Host) => console.warn(`${host.address} down`));

interface Order { id: types.Uuid; total: types.BigDecimal; placed: Date }

async function main(): Promise<void> {
  await client.connect();
  const id = types.Uuid.random();
  await client.execute('INSERT INTO orders (id, total, placed) VALUES (?, ?, ?)',
    [id, types.BigDecimal.fromString('9.99'), new Date()], { prepare: true });
  const rs: types.ResultSet = await client.execute('SELECT * FROM orders WHERE id = ?', [id],
    { prepare: true, executionProfile: 'reporting', fetchSize: 100, traceQuery: true });
  const row = rs.first();
  if (row) {
    const total: types.BigDecimal = row.get('total');
    console.log(total.toString(), row['placed'] as Date);
  }
  for (const r of rs) console.log(r.get('id'));
  for await (const r of rs) console.log(r.keys());
  const order: Order | undefined = rs.rows.map((r) => ({ id: r.id, total: r.total, placed: r.placed }))[0];
  console.log(order, JSON.stringify({ big: types.Long.fromString('1234567890123') }));

  const group = await cassandra.concurrent.executeConcurrent(client, 'INSERT INTO t (id) VALUES (?)',
    [[types.Uuid.random()], [types.Uuid.random()]], { concurrencyLevel: 32, raiseOnFirstError: false });
  console.log(group.totalExecuted, group.errors.length);

  client.hosts.forEach((h) => console.log(h.address, h.datacenter, h.isUp()));
  const connected: cassandra.Host[] = client.getState().getConnectedHosts();
  console.log(connected.length, Object.keys(client.metadata.keyspaces));
  const table = await client.metadata.getTable('shop', 'orders');
  if (table) console.log(table.partitionKeys.map((c) => c.name), table.columns.length);
  if (rs.info.traceId) {
    const trace = await client.metadata.getTrace(rs.info.traceId);
    console.log(trace.duration, trace.events.length);
  }
  const replicas = client.metadata.getReplicas('shop', id.getBuffer());
  console.log(replicas.map((h) => h.address), types.TimeUuid.fromDate(new Date(2020, 1, 1)).getDate());

  try {
    await client.execute('SELEC oops');
  } catch (err) {
    if (err instanceof errors.ResponseError && err.code === types.responseErrorCodes.syntaxError) console.log('syntax');
    if (err instanceof errors.NoHostAvailableError) {
      for (const [host, inner] of Object.entries(err.innerErrors)) console.log(host, inner.message, inner.code);
    }
  }
  client.execute('SELECT now() FROM system.local', (err, result) => {
    if (!err && result) console.log(result.rowLength);
  });
  const mapper = new mapping.Mapper(client, { models: { Order: { tables: ['orders'], mappings: new mapping.UnderscoreCqlToCamelCaseMappings() } } });
  const orders = mapper.forModel<Order>('Order');
  const found = await orders.find({ id, total: mapping.q.gte(1) }, { limit: 10 });
  const firstOrder: Order | null = found.first();
  console.log(firstOrder, (await orders.get({ id }))?.placed);
  await client.shutdown();
}

main().catch((e: Error) => { console.error(e); process.exit(1); });

'use strict';
// mapping.Mapper against the server: insert into every table whose key the document
// covers, find/get by partition key with q operators, update with assignments, remove,
// conditional writes, batch, mapWithQuery.
const test = require('node:test');
const assert = require('node:assert/strict');
const { cql, setupKeyspace } = require('./helpers');

const { Mapper, q, UnderscoreCqlToCamelCaseMappings } = cql.mapping;

test('Mapper over two tables', async (t) => {
  const { client, ks, drop } = await setupKeyspace(__filename);
  try {
    await client.execute('CREATE TABLE videos (video_id int PRIMARY KEY, user_id int, name text, tags set<text>)');
    await client.execute('CREATE TABLE user_videos (user_id int, added int, video_id int, name text, PRIMARY KEY (user_id, added))');
    const mapper = new Mapper(client, { models: { Video: { tables: ['videos', 'user_videos'], keyspace: ks, mappings: new UnderscoreCqlToCamelCaseMappings() } } });
    const videos = mapper.forModel('Video');
    await t.test('insert writes every table whose primary key the document covers', async () => {
      await videos.insert({ videoId: 1, userId: 7, added: 100, name: 'first', tags: ['a'] });
      await videos.insert({ videoId: 2, userId: 7, added: 200, name: 'second' });
      assert.equal((await client.execute('SELECT COUNT(*) AS n FROM videos')).first().n.toString(), '2');
      assert.equal((await client.execute('SELECT COUNT(*) AS n FROM user_videos')).first().n.toString(), '2');
    });
    await t.test('find and get choose the table by key, with q operators and docInfo', async () => {
      const v = await videos.get({ videoId: 1 });
      assert.deepEqual([v.videoId, v.userId, v.name, v.tags], [1, 7, 'first', ['a']]);
      const mine = await videos.find({ userId: 7, added: q.gt(150) });
      assert.deepEqual(mine.toArray().map((r) => r.name), ['second']);
      const ordered = await videos.find({ userId: 7 }, { orderBy: { added: 'desc' }, limit: 1, fields: ['name', 'added'] });
      assert.deepEqual(ordered.toArray(), [{ name: 'second', added: 200 }]);
      assert.equal((await videos.findAll()).length, 2);
    });
    await t.test('update, conditional update and remove', async () => {
      await videos.update({ videoId: 1, name: 'renamed', tags: q.append(['b']) });
      assert.deepEqual(await videos.get({ videoId: 1 }, { fields: ['name', 'tags'] }), { name: 'renamed', tags: ['a', 'b'] });
      const r = await videos.update({ videoId: 1, name: 'x' }, { when: { name: 'not-it' } });
      assert.equal(r.wasApplied(), false);
      await videos.remove({ videoId: 2 });
      assert.equal(await videos.get({ videoId: 2 }), null);
    });
    await t.test('batch and mapWithQuery', async () => {
      await mapper.batch([videos.batching.insert({ videoId: 3, name: 'b1' }), videos.batching.insert({ videoId: 4, name: 'b2' })]);
      const byName = videos.mapWithQuery(`SELECT name FROM ${ks}.videos WHERE video_id IN ?`, (d) => [d.ids]);
      const names = (await byName({ ids: [3, 4] })).toArray().map((r) => r.name).sort();
      assert.deepEqual(names, ['b1', 'b2']);
    });
  } finally { await drop(); }
});

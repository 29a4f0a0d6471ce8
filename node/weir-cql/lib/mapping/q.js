'use strict';
// `mapping.q`: query operators of cassandra-driver's Mapper, as plain descriptors that
// query.js turns into CQL.

class QueryOperator {
  constructor(sign, value, hasChildValues, isInOperator) {
    this.sign = sign;
    this.value = value;
    this.hasChildValues = !!hasChildValues;
    this.isInOperator = !!isInOperator;
  }
}

class QueryAssignment {
  constructor(sign, value, inverted) { this.sign = sign; this.value = value; this.inverted = !!inverted; }
}

const q = {
  in_: (arr) => { if (!Array.isArray(arr)) throw new TypeError('q.in_() needs an Array'); return new QueryOperator('IN', arr, false, true); },
  gt: (v) => new QueryOperator('>', v),
  gte: (v) => new QueryOperator('>=', v),
  lt: (v) => new QueryOperator('<', v),
  lte: (v) => new QueryOperator('<=', v),
  notEq: (v) => new QueryOperator('!=', v),
  and: (c1, c2) => new QueryOperator('AND', [c1, c2], true),
  incr: (v) => new QueryAssignment('+', v),
  decr: (v) => new QueryAssignment('-', v),
  append: (v) => new QueryAssignment('+', v),
  prepend: (v) => new QueryAssignment('+', v, true),
  remove: (v) => new QueryAssignment('-', v),
};

module.exports = { q, QueryOperator, QueryAssignment };

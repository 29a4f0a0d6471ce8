'use strict';
// Column <-> property name mappings of cassandra-driver's Mapper.

class TableMappings {
  getColumnName(propName) { return propName; }
  getPropertyName(columnName) { return columnName; }
  newObjectInstance() { return {}; }
}

class DefaultTableMappings extends TableMappings {}

/** `added_date` <-> `addedDate`. */
class UnderscoreCqlToCamelCaseMappings extends TableMappings {
  getColumnName(propName) { return propName.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()); }
  getPropertyName(columnName) { return columnName.replace(/_([a-z0-9])/g, (m, c) => c.toUpperCase()); }
}

module.exports = { TableMappings, DefaultTableMappings, UnderscoreCqlToCamelCaseMappings };

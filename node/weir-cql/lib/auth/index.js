'use strict';
// `auth` of cassandra-driver 4.x. PlainTextAuthProvider (and DSE's plain-text provider,
// the same SASL PLAIN exchange) hand their username and password to the Rust driver's
// PasswordAuthenticator support; the exchange runs in Rust during each connection's
// start-up, so a custom provider's JS authenticator cannot take part and is refused by
// lib/options.js with NotSupportedError.

class Authenticator {
  initialResponse(callback) { callback(null, null); }
  evaluateChallenge(challenge, callback) { callback(null, null); }
  onAuthenticationSuccess() {}
}

class AuthProvider {
  newAuthenticator() { throw new Error('AuthProvider.newAuthenticator must be implemented'); }
}

class PlainTextAuthenticator extends Authenticator {
  constructor(username, password) { super(); this.username = username; this.password = password; }
  initialResponse(callback) {
    callback(null, Buffer.concat([Buffer.from([0]), Buffer.from(this.username, 'utf8'), Buffer.from([0]), Buffer.from(this.password, 'utf8')]));
  }
}

class PlainTextAuthProvider extends AuthProvider {
  constructor(username, password) { super(); this.username = username; this.password = password; }
  newAuthenticator() { return new PlainTextAuthenticator(this.username, this.password); }
}

class DsePlainTextAuthProvider extends PlainTextAuthProvider {
  constructor(username, password, authorizationId) {
    super(username, password);
    if (authorizationId) {
      const { NotSupportedError } = require('../errors');
      throw new NotSupportedError('DsePlainTextAuthProvider: authorizationId (proxy authentication) is not supported');
    }
  }
}

/** {username, password} for a supported provider, or null for a custom one. */
function plainCredentials(provider) {
  if (provider instanceof PlainTextAuthProvider && (provider.constructor === PlainTextAuthProvider || provider.constructor === DsePlainTextAuthProvider)) {
    return { username: String(provider.username), password: String(provider.password) };
  }
  return null;
}

module.exports = { Authenticator, AuthProvider, PlainTextAuthProvider, DsePlainTextAuthProvider,
  PlainTextAuthenticator, plainCredentials };

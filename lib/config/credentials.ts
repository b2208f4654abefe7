/**
 * The secret material of one cluster (SASL username and password, TLS CA, client certificate and
 * key), as lib/secrets reads it and lib/kafka turns it into connection options. It lives here,
 * with the config it completes, because two adapters share it and neither may import the other.
 */

/** What a cluster's secret may hold (JSON). PEM strings for the TLS parts. */
export interface ClusterCredentials {
  readonly username?: string;
  readonly password?: string;
  /** CA certificate(s) to trust instead of the system store (private CA). */
  readonly ca?: string;
  /** Client certificate and key for mutual TLS; both or neither. */
  readonly cert?: string;
  readonly key?: string;
}

/** What every command that talks to the clusters needs, opened in order and closed in reverse. */
import type { MirrorConfig } from "../../config/schema.js";
import { DEFAULT_PROVENANCE_HEADER } from "../../core/provenance.js";
import { topicSelectorOf } from "../../replicator.js";
import type { TopicSelector } from "../../topics/selection.js";
import { type ClusterHandle, type ClusterSecurity, clusterSecurity, openCluster } from "../clusters.js";
import { loadConfigFile } from "../config-file.js";
import { type CliIo, CliLogger } from "../console.js";
import type { LeaseStoreKind } from "../leases.js";

export interface GlobalOptions {
  readonly config: string;
  readonly json: boolean;
  readonly debug: boolean;
  readonly stateDir: string;
  readonly leaseStore: LeaseStoreKind;
  readonly signal: AbortSignal;
}

export interface Clusters {
  readonly config: MirrorConfig;
  readonly logger: CliLogger;
  readonly mapping: TopicSelector;
  /** Each side's TLS and SASL options, for connections the command opens itself. */
  readonly security: ClusterSecurity;
  readonly source: ClusterHandle;
  readonly target: ClusterHandle;
  close(): Promise<void>;
}

export async function openClusters(options: GlobalOptions, io: CliIo): Promise<Clusters> {
  const config = await loadConfigFile(options.config);
  const security = await clusterSecurity(config);
  const logger = new CliLogger(io, options.debug);
  const mapping = topicSelectorOf(config);
  const source = await openCluster(config, "source", logger, security.source);
  let target: ClusterHandle;
  try {
    target = await openCluster(config, "target", logger, security.target);
  } catch (error) {
    await source.close();
    throw error;
  }
  return {
    config,
    logger,
    mapping,
    security,
    source,
    target,
    async close() {
      await Promise.allSettled([source.close(), target.close()]);
    },
  };
}

/**
 * The header the workers append to every copy (provenance), which verify must not count as a
 * difference; undefined when the config turns it off or predates it.
 */
export function mirrorHeaderOf(config: MirrorConfig): Buffer | undefined {
  const provenance = (config as { provenance?: { enabled?: boolean; header?: string } }).provenance;
  if (provenance === undefined || provenance.enabled === false) return undefined;
  return Buffer.from(provenance.header ?? DEFAULT_PROVENANCE_HEADER);
}

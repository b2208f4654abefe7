// dynalite 4 ships no types; this is the part of its API the embedded lease server uses.
declare module "dynalite" {
  import type { Server } from "node:http";

  interface DynaliteOptions {
    /** LevelDB directory; in memory when absent. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}

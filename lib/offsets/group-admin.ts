/**
 * The consumer-group port offset sync uses. Until wt-gbed's GroupAdmin lands in core/ports.ts it
 * is declared here, exactly as agreed; then this file re-exports it.
 */
export interface GroupAdmin {
  listGroups(): Promise<
    { readonly groupId: string; readonly protocolType: string; readonly state: string }[]
  >;
  describeGroups(
    groupIds: readonly string[],
  ): Promise<{ readonly groupId: string; readonly state: string; readonly members: number }[]>;
  /** Offset -1: none committed. */
  fetchOffsets(
    groupId: string,
    topics?: readonly string[],
  ): Promise<
    {
      readonly topic: string;
      readonly partition: number;
      readonly offset: number;
      readonly metadata: string | null;
    }[]
  >;
  /** Throws GROUP_NOT_EMPTY when the group has active members. */
  commitOffsets(
    groupId: string,
    offsets: readonly {
      readonly topic: string;
      readonly partition: number;
      readonly offset: number;
      readonly metadata?: string;
    }[],
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * What copying one GiB would cost on Lambda at the measured rate. The prices are inputs, printed
 * with the result: list prices of us-east-1 at the time of writing, to be checked against
 * current pricing before anyone quotes the figure.
 */

export interface PriceInputs {
  /** Lambda arm64 compute, USD per GB-second. */
  readonly lambdaGbSecondUsd: number;
  /** USD per Lambda invocation. */
  readonly lambdaRequestUsd: number;
  /** Seconds one invocation copies for (a scheduled worker's time budget). */
  readonly invocationSeconds: number;
  /** DynamoDB on-demand, USD per write request unit (a write of up to 1 KiB). */
  readonly dynamodbWriteUsd: number;
  /** DynamoDB on-demand, USD per read request unit (a strongly consistent read of up to 4 KiB). */
  readonly dynamodbReadUsd: number;
}

export const DEFAULT_PRICES: PriceInputs = {
  lambdaGbSecondUsd: 0.0000133334,
  lambdaRequestUsd: 0.2 / 1_000_000,
  invocationSeconds: 840,
  dynamodbWriteUsd: 0.625 / 1_000_000,
  dynamodbReadUsd: 0.125 / 1_000_000,
};

export interface CostEstimate {
  readonly secondsPerGib: number;
  readonly lambdaUsdPerGib: number;
  readonly dynamodbUsdPerGib: number;
  readonly totalUsdPerGib: number;
}

/** DynamoDB capacity the lease store consumed per GiB copied (mirror-worker.ts, CapacityMeter). */
export interface DynamoDbUnitsPerGib {
  readonly read: number;
  readonly write: number;
}

/**
 * @param bytesPerSecond the measured copy rate (payload bytes)
 * @param unitsPerGib the lease store's read and write units per GiB, measured at that rate
 */
export function estimateCost(
  bytesPerSecond: number,
  unitsPerGib: DynamoDbUnitsPerGib,
  memoryMb: number,
  prices: PriceInputs = DEFAULT_PRICES,
): CostEstimate {
  const secondsPerGib = 2 ** 30 / bytesPerSecond;
  const compute = secondsPerGib * (memoryMb / 1024) * prices.lambdaGbSecondUsd;
  const requests = (secondsPerGib / prices.invocationSeconds) * prices.lambdaRequestUsd;
  const lambdaUsdPerGib = compute + requests;
  const dynamodbUsdPerGib =
    unitsPerGib.write * prices.dynamodbWriteUsd + unitsPerGib.read * prices.dynamodbReadUsd;
  return {
    secondsPerGib,
    lambdaUsdPerGib,
    dynamodbUsdPerGib,
    totalUsdPerGib: lambdaUsdPerGib + dynamodbUsdPerGib,
  };
}

/**
 * Our Logger port over Powertools' structured JSON logger. The core never logs payloads; this
 * adapter adds nothing but the Lambda context Powertools attaches itself.
 */
import { Logger as PowertoolsLogger } from "@aws-lambda-powertools/logger";
import type { LogFields, Logger } from "../core/ports.js";

export class PowertoolsLoggerAdapter implements Logger {
  /** The Powertools logger, for middleware such as injectLambdaContext. */
  readonly powertools: PowertoolsLogger;

  constructor(powertools: PowertoolsLogger = new PowertoolsLogger()) {
    this.powertools = powertools;
  }

  debug(message: string, fields?: LogFields): void {
    this.powertools.debug(message, fields ?? {});
  }
  info(message: string, fields?: LogFields): void {
    this.powertools.info(message, fields ?? {});
  }
  warn(message: string, fields?: LogFields): void {
    this.powertools.warn(message, fields ?? {});
  }
  error(message: string, fields?: LogFields): void {
    this.powertools.error(message, fields ?? {});
  }
}

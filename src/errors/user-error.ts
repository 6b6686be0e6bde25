import { type ErrorCode, ProductError } from './product-error.js';

/** The failures only the command line and the jobs' settings meet: their input, ports, a report they run, a query they are given. */
type UserErrorCode = Extract<
  ErrorCode,
  'BAD_INPUT' | 'PORT_IN_USE' | 'LISTEN_FAILED' | 'REPORT_FAILED' | 'QUERY_REFUSED'
>;

/** An error whose message is meant for the user as it is: one line, no stack trace. */
export class UserError extends ProductError {
  declare readonly code: UserErrorCode;

  constructor(message: string, code: UserErrorCode = 'BAD_INPUT') {
    super(code, message);
  }
}

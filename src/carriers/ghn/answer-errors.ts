import type { GhnErrorAnswer } from './answer-envelope.js';

/**
 * GHN answers an error with a code and a Vietnamese or English text, not a stable error code: the
 * product names each kind it knows by a code of its own, found from GHN's code and texts, and stores
 * that code with GHN's text beside it.
 */
export interface GhnErrorKind {
  readonly code: string;
  readonly condition: string;
  /** A later identical request can succeed. */
  readonly transient: boolean;
  /** An answer about the order itself, final whatever token asks or when: the order's lookup is settled. */
  readonly settles: boolean;
  /** The token or shop is refused: no order can be looked up with it. */
  readonly stopsKey: boolean;
  readonly matches: (answer: GhnErrorAnswer) => boolean;
}

const says =
  (...texts: string[]) =>
  (answer: GhnErrorAnswer) =>
    texts.some((text) => answer.message.includes(text) || answer.codeMessage === text);

export const GHN_ERROR_KINDS: readonly GhnErrorKind[] = [
  {
    code: 'GHN_TOKEN_REFUSED',
    condition: 'The token is missing or not valid',
    transient: false,
    settles: false,
    stopsKey: true,
    matches: says('Token is not valid', 'Token is required'),
  },
  {
    code: 'GHN_SHOP_REFUSED',
    condition: 'The shop id is not valid, or not a shop of the token',
    transient: false,
    settles: false,
    stopsKey: true,
    matches: says('SHOP_NOT_FOUND', 'ShopID is invalid', 'CLIENT_NOT_OWNER_OF_SHOP'),
  },
  {
    code: 'GHN_ORDER_NOT_FOUND',
    condition: 'No such order',
    transient: false,
    settles: true,
    stopsKey: false,
    matches: says('Đơn hàng không tồn tại', 'Không tìm thấy thông tin đơn hàng'),
  },
  {
    code: 'GHN_RATE_LIMITED',
    condition: 'Too many requests',
    transient: true,
    settles: false,
    stopsKey: false,
    matches: (answer) => answer.code === 429,
  },
  {
    code: 'GHN_SERVER_ERROR',
    condition: "An error of GHN's side",
    transient: true,
    settles: false,
    stopsKey: false,
    matches: (answer) => answer.code >= 500,
  },
  {
    code: 'GHN_REQUEST_REFUSED',
    condition: 'The request was refused (its JSON or a field)',
    transient: false,
    settles: false,
    stopsKey: false,
    matches: says('Syntax error', 'USER_ERR_COMMON'),
  },
];

/** An error GHN answered that no kind above names: kept, and the order looked up again later. */
export const GHN_OTHER_ERROR: GhnErrorKind = {
  code: 'GHN_OTHER_ERROR',
  condition: 'An error the product does not know',
  transient: true,
  settles: false,
  stopsKey: false,
  matches: () => true,
};

/** The kind of an error answer: the first whose texts it carries, else GHN_OTHER_ERROR. */
export function classifyGhnError(answer: GhnErrorAnswer): GhnErrorKind {
  return GHN_ERROR_KINDS.find((kind) => kind.matches(answer)) ?? GHN_OTHER_ERROR;
}

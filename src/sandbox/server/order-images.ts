import { describeIssues, ImagesRequestSchema, type ImagesResultWire } from '../../carriers/247express/contract.js';
import type { Account } from '../world/order-plan.js';
import type { SandboxWorld } from '../world/sandbox-world.js';
import { deriveSeed, SeededRandom } from '../world/seeded-random.js';
import { eventsBy } from '../world/tracking-snapshot.js';

function imagesFailure(code: string, message: string): ImagesResultWire {
  return { Items: [], Errors: [{ Code: code, Message: message }], ErrorMessage: message };
}

/** The image list of an order: its proof-of-delivery photos once it is delivered, else none. */
export function answerOrderImages(
  world: SandboxWorld,
  account: Account,
  now: number,
  imageBaseUrl: string,
  body: unknown,
): ImagesResultWire {
  const checked = ImagesRequestSchema.safeParse(body);
  if (!checked.success) return imagesFailure('INVALID_REQUEST', describeIssues(checked.error.issues, 'images request'));
  const code = checked.data.OrderCode;
  const plan = world.findOrder(code);
  if (!plan || eventsBy(plan, now).length === 0)
    return imagesFailure('ORDERCODE_NOT_FOUND', `Order code does not exist: ${code}`);
  if (plan.account !== account)
    return imagesFailure('ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT', 'Order code does not belong to your account');
  const delivered = eventsBy(plan, now).some((e) => e.status === '30');
  const count = delivered ? plan.imageCount : 0;
  return {
    Items: Array.from({ length: count }, (_, i) => ({
      No: i + 1,
      OrderCode: code,
      ImageURL: `${imageBaseUrl}/images/${code}/${i + 1}.jpg`,
    })),
    Errors: [],
    ErrorMessage: '',
  };
}

/** The bytes of one sandbox image: a small JPEG-framed file, the same for the same order and number. */
export function imageFileBytes(seed: number, orderCode: string, no: number, size: number): Buffer {
  const rng = new SeededRandom(deriveSeed(seed, 'image', orderCode, no));
  const bytes = Buffer.alloc(Math.max(size, 4));
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(0, 255);
  bytes[0] = 0xff;
  bytes[1] = 0xd8;
  bytes[bytes.length - 2] = 0xff;
  bytes[bytes.length - 1] = 0xd9;
  return bytes;
}

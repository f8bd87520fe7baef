// Whose quota a request counts against (src/access/rate-limit/client-bucket.ts).
import { clientBucket, clientBucketName } from '../../src/access/rate-limit/client-bucket.ts';
import { describe, expect, it } from 'vitest';

describe('clientBucket (whose quota a request counts against)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:85a3:1:8a2e:370:7334:1', '2001:db8:85a3:1::/64'],
    ['2001:db8:85a3:1:ffff::2', '2001:db8:85a3:1::/64'],
    ['2001:0DB8:0000:0001::', '2001:db8:0:1::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not:an:address:::', 'not:an:address:::'],
  ])('%s → %s', (ip, bucket) => expect(clientBucket(ip)).toBe(bucket));

  it('names a bucket once per connection and scope, and again when the client address changes (TRUST_PROXY)', () => {
    const socket = {};
    const free = clientBucketName('free', '::ffff:203.0.113.7', socket);
    expect(free).toBe('free:203.0.113.7');
    expect(clientBucketName('free', '::ffff:203.0.113.7', socket)).toBe(free);
    expect(clientBucketName('paid', '::ffff:203.0.113.7', socket)).toBe('paid:203.0.113.7');
    // Behind a proxy one connection carries several clients: each is named for its own address.
    expect(clientBucketName('free', '198.51.100.9', socket)).toBe('free:198.51.100.9');
    expect(clientBucketName('free', '2001:db8:85a3:1::2', {})).toBe('free:2001:db8:85a3:1::/64');
  });
});

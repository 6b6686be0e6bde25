import { resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageFileName, isHostAllowed, pathInside } from '../../src/carriers/client/image-download.js';

describe('image file names', () => {
  it.each([
    ['EX100000001', 1, 'http://h/images/EX100000001/1.jpg', 'EX100000001-1.jpg'],
    ['../../etc/passwd', 2, 'http://h/a.PNG', '______etc_passwd-2.png'],
    ['..\\..\\win', 3, 'http://h/x.sh', '______win-3.bin'],
    ['a/b', 4, 'http://h/no-extension', 'a_b-4.bin'],
    ['', -5, 'not a url', 'order-5.bin'],
    ['nul\u0000byte', 6, 'http://h/%2e%2e%2f.jpg', 'nul_byte-6.jpg'],
  ])('derives %j #%d (%s) as %s', (code, no, url, name) => {
    expect(imageFileName(code, no, url)).toBe(name);
  });

  it('keeps every derived name inside the folder, and refuses a name that would leave it', () => {
    const dir = resolve('/tmp/images');
    for (const code of ['../..', '/abs', '..', '.'])
      expect(pathInside(dir, imageFileName(code, 1, 'http://h/x.jpg')).startsWith(dir + sep)).toBe(true);
    expect(() => pathInside(dir, '../x.jpg')).toThrow(/leaves the download folder/);
    expect(() => pathInside(dir, '/etc/x.jpg')).toThrow(/leaves the download folder/);
  });

  it('allows a host by name (any port) or by host:port', () => {
    expect(isHostAllowed(new URL('http://Img.Example.org:8080/a.jpg'), ['img.example.org'])).toBe(true);
    expect(isHostAllowed(new URL('http://img.example.org:8080/a.jpg'), ['img.example.org:9090'])).toBe(false);
    expect(isHostAllowed(new URL('http://img.example.org.evil.net/a.jpg'), ['img.example.org'])).toBe(false);
    expect(isHostAllowed(new URL('http://user@evil.net/a.jpg'), ['img.example.org'])).toBe(false);
  });
});

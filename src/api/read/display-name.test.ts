import { describe, expect, it } from 'vitest';
import { displayNameOf } from './display-name.ts';

describe('display_name', () => {
  it('default: the first non-null title in the given (listing_id) order', () => {
    expect(
      displayNameOf([
        { title: null, resource_url: 'https://a.example/x' },
        { title: 'Weather', resource_url: 'https://b.example' },
        { title: 'Later', resource_url: 'https://c.example' },
      ]),
    ).toBe('Weather');
  });

  it('behavior: without any title, the host of the first resource URL (port kept)', () => {
    expect(
      displayNameOf([
        { title: null, resource_url: 'https://api.example.com:8443/v1/x?q=1' },
        { title: null, resource_url: 'https://b.example' },
      ]),
    ).toBe('api.example.com:8443');
    expect(displayNameOf([{ title: '  ', resource_url: 'https://blank.example/' }])).toBe('blank.example');
  });

  it('error: no listing gives null; a resource that is not a URL is shown as it is', () => {
    expect(displayNameOf([])).toBeNull();
    expect(displayNameOf([{ title: null, resource_url: 'not a url' }])).toBe('not a url');
  });
});

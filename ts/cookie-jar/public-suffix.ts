// The Public Suffix List, through tldts (a maintained copy of publicsuffix.org's list, ICANN and
// private sections both, as browsers use it): a Domain attribute may not name a public suffix,
// and the per-domain cap and the same-site test group hosts by their registrable domain.
import { getDomain, getPublicSuffix } from 'tldts';

const OPTIONS = { allowPrivateDomains: true, validateHostname: false } as const;

/** True when `domain` (lower-case ASCII, no leading dot) is itself a public suffix ('com', 'co.uk', 'github.io'). */
export function isPublicSuffix(domain: string): boolean {
  return getPublicSuffix(domain, OPTIONS) === domain;
}

/** The registrable domain of a host ('example.co.uk' for 'www.example.co.uk'); the host itself when it has none. */
export function siteOf(host: string, isIp: boolean): string {
  if (isIp) return host;
  return getDomain(host, OPTIONS) ?? host;
}

// Whether a request matches a registered interceptor (path, method, body, headers, in that order),
// and, when nothing matches, an explanation: the closest interceptor and the first field that differs.
import type { MockInterceptor } from './mock-interceptor.js';
import { stripTrailingSlash, type MockRequestKey } from './mock-request.js';

type MockDispatch = MockInterceptor.MockDispatch;
type Matcher = string | RegExp | ((value: string) => boolean);

type MockField = 'path' | 'method' | 'body' | 'headers';
const FIELDS: readonly MockField[] = ['path', 'method', 'body', 'headers'];

/** Interceptors registered for one origin matcher: still answering, and used up. */
export interface InterceptorGroup {
  origin: string;
  active: readonly MockDispatch[];
  usedUp: readonly MockDispatch[];
}

function test(matcher: Matcher, value: string | undefined): boolean {
  if (typeof matcher === 'string') return matcher === value;
  if (matcher instanceof RegExp) {
    if (value === undefined) return false;
    // A global or sticky RegExp remembers where it stopped; every request starts afresh.
    matcher.lastIndex = 0;
    return matcher.test(value);
  }
  if (typeof matcher === 'function') return Boolean(matcher(value as string));
  return false;
}

function pathFor(d: MockDispatch, key: MockRequestKey): string {
  return d.ignoreTrailingSlash ? stripTrailingSlash(key.path) : key.path;
}

/** The first header matcher of `d` that the request fails, or undefined when all pass. */
function failingHeader(d: MockDispatch, key: MockRequestKey): [string, Matcher] | undefined {
  const matchers = d.headers;
  if (matchers === undefined || typeof matchers === 'function') return undefined;
  for (const [name, matcher] of Object.entries(matchers)) {
    if (!test(matcher, key.headers?.[name.toLowerCase()])) return [name, matcher];
  }
  return undefined;
}

function fieldMatches(d: MockDispatch, field: MockField, key: MockRequestKey): boolean {
  switch (field) {
    case 'path': {
      const actual = pathFor(d, key);
      if (typeof d.path === 'string') return (d.ignoreTrailingSlash ? stripTrailingSlash(d.path) : d.path) === actual;
      return test(d.path, actual);
    }
    case 'method':
      return test(d.method ?? 'GET', key.method);
    case 'body':
      return d.body === undefined || test(d.body, key.body);
    case 'headers':
      if (d.headers === undefined) return true;
      if (typeof d.headers === 'function') return Boolean(d.headers({ ...key.headers }));
      return failingHeader(d, key) === undefined;
  }
}

function matches(d: MockDispatch, key: MockRequestKey): boolean {
  return FIELDS.every((field) => fieldMatches(d, field, key));
}

/** The first interceptor in registration order that still answers and matches. */
export function findMatch(dispatches: readonly MockDispatch[], key: MockRequestKey): MockDispatch | undefined {
  return dispatches.find((d) => !d.consumed && matches(d, key));
}

// ---- explaining a miss ----

function quote(text: string | undefined): string {
  if (text === undefined) return 'nothing';
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return `'${short}'`;
}

function showMatcher(matcher: unknown): string {
  if (typeof matcher === 'string') return matcher;
  if (matcher instanceof RegExp) return String(matcher);
  if (typeof matcher === 'function') return matcher.name ? `[function ${matcher.name}]` : '[function]';
  return String(matcher);
}

function showInterceptor(d: MockDispatch): string {
  let text = `${showMatcher(d.method ?? 'GET')} ${showMatcher(d.path)}`;
  if (d.body !== undefined) text += ` with body ${typeof d.body === 'string' ? quote(d.body) : showMatcher(d.body)}`;
  if (typeof d.headers === 'function') text += ` with headers ${showMatcher(d.headers)}`;
  else if (d.headers !== undefined) {
    const names = Object.keys(d.headers);
    if (names.length > 0) text += ` with headers ${names.join(', ')}`;
  }
  return text;
}

function mismatch(what: string, matcher: unknown, actual: string | undefined, fnName = `the ${what} function`): string {
  if (typeof matcher === 'string') return `${what}: expected ${quote(matcher)}, got ${quote(actual)}`;
  if (matcher instanceof RegExp) return `${what}: ${quote(actual)} does not match ${String(matcher)}`;
  return `${what}: ${fnName} returned false for ${quote(actual)}`;
}

function differenceIn(d: MockDispatch, field: MockField, key: MockRequestKey): string {
  switch (field) {
    case 'path': {
      const actual = pathFor(d, key);
      let text = mismatch('path', d.path, actual);
      if (typeof d.path === 'string') {
        const [wantName] = d.path.split('?');
        const [gotName] = actual.split('?');
        if (stripTrailingSlash(d.path) === stripTrailingSlash(actual)) {
          text += ' (only a trailing slash differs: pass ignoreTrailingSlash: true to accept both)';
        } else if (wantName === gotName) {
          text += ' (the query differs; parameters are compared sorted by name)';
        }
      }
      return text;
    }
    case 'method':
      return mismatch('method', d.method ?? 'GET', key.method);
    case 'body':
      return mismatch('body', d.body, key.body);
    case 'headers': {
      if (typeof d.headers === 'function') {
        return `headers: the headers function returned false for ${JSON.stringify(key.headers ?? {})}`;
      }
      const failing = failingHeader(d, key);
      if (failing === undefined) return 'headers differ';
      const [name, matcher] = failing;
      const actual = key.headers?.[name.toLowerCase()];
      if (actual === undefined) {
        return `header '${name}': expected ${typeof matcher === 'string' ? quote(matcher) : showMatcher(matcher)}, but the request has no '${name}' header`;
      }
      return mismatch(`header '${name}'`, matcher, actual, 'its matcher function');
    }
  }
}

interface Candidate {
  group: InterceptorGroup;
  dispatch: MockDispatch;
  index: number;
  /** Fields matched before the first that fails, in matching order. */
  prefix: number;
  total: number;
  firstFailing: MockField | undefined;
}

function closest(groups: readonly InterceptorGroup[], key: MockRequestKey): Candidate | undefined {
  let best: Candidate | undefined;
  for (const group of groups) {
    group.active.forEach((dispatch, index) => {
      const results = FIELDS.map((field) => {
        try {
          return fieldMatches(dispatch, field, key);
        } catch {
          return false;
        }
      });
      const failingAt = results.indexOf(false);
      const candidate: Candidate = {
        group,
        dispatch,
        index,
        prefix: failingAt === -1 ? FIELDS.length : failingAt,
        total: results.filter(Boolean).length,
        firstFailing: failingAt === -1 ? undefined : FIELDS[failingAt],
      };
      if (
        best === undefined ||
        candidate.prefix > best.prefix ||
        (candidate.prefix === best.prefix && candidate.total > best.total)
      ) {
        best = candidate;
      }
    });
  }
  return best;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/**
 * Why no interceptor answered `key`. The headline names the stage where every interceptor of the
 * origin dropped out (path, then method, body, headers); the details name the closest interceptor
 * and the first field in which it differs.
 */
export function explainMiss(
  key: MockRequestKey,
  local: readonly InterceptorGroup[],
  others: readonly InterceptorGroup[],
): { headline: string; details: string } {
  let remaining = local.flatMap((g) => g.active.filter((d) => !d.consumed));
  let headline = `Mock dispatch not matched for path '${key.path}'`;
  const stages: [MockField, string][] = [
    ['path', headline],
    ['method', `Mock dispatch not matched for method '${key.method}' on path '${key.path}'`],
    ['body', `Mock dispatch not matched for body '${key.body}' on path '${key.path}'`],
    [
      'headers',
      `Mock dispatch not matched for headers '${JSON.stringify(key.headersAsGiven)}' on path '${key.path}'`,
    ],
  ];
  for (const [field, text] of stages) {
    remaining = remaining.filter((d) => {
      try {
        return fieldMatches(d, field, key);
      } catch {
        return false;
      }
    });
    if (remaining.length === 0) {
      headline = text;
      break;
    }
  }

  const lines: string[] = [];
  for (const group of local) {
    const spent = group.usedUp.find((d) => {
      try {
        return matches(d, key);
      } catch {
        return false;
      }
    });
    if (spent !== undefined) {
      const n = spent.timesInvoked;
      lines.push(
        `The interceptor ${showInterceptor(spent)} on ${group.origin} matches this request but was used up ` +
          `after ${n} ${n === 1 ? 'reply' : 'replies'}; use .times(n) or .persist() to reply more often.`,
      );
      return { headline, details: lines.join('\n') };
    }
  }

  const near = closest(local, key);
  if (near !== undefined) {
    const position = local.length === 1 && local[0]!.active.length === 1 ? '' : `, the ${ordinal(near.index + 1)} still active there`;
    lines.push(`Closest interceptor: ${showInterceptor(near.dispatch)} (on ${near.group.origin}${position})`);
    lines.push(`First difference: ${near.firstFailing ? differenceIn(near.dispatch, near.firstFailing, key) : 'none'}`);
    return { headline, details: lines.join('\n') };
  }

  const anyLocal = local.some((g) => g.usedUp.length > 0);
  lines.push(
    anyLocal
      ? `Every interceptor registered for ${key.origin} has been used up.`
      : `No interceptors are registered for origin ${key.origin}.`,
  );
  const far = closest(others, key);
  if (far !== undefined) {
    const origins = [...new Set(others.filter((g) => g.active.length > 0).map((g) => g.origin))];
    const listed = origins.slice(0, 5).join(', ') + (origins.length > 5 ? `, and ${origins.length - 5} more` : '');
    lines.push(`Origins with interceptors: ${listed}.`);
    lines.push(`Closest interceptor: ${showInterceptor(far.dispatch)} (on ${far.group.origin})`);
    lines.push(
      far.firstFailing === undefined
        ? `First difference: origin: expected ${quote(far.group.origin)}, got ${quote(key.origin)} (everything else matches)`
        : `First difference: origin: expected ${quote(far.group.origin)}, got ${quote(key.origin)}; ` +
            `then ${differenceIn(far.dispatch, far.firstFailing, key)}`,
    );
  }
  return { headline, details: lines.join('\n') };
}

// The manifests pack:all publishes, and the check that a packed tarball's manifest runs nothing on
// a consumer's install. The checkout's package.json keeps its `prepare` script (the source build
// for a clone); the published one has no scripts at all, and lists the platform packages as
// optional dependencies so npm picks the binary by os / cpu / libc.
import { spawnSync } from 'node:child_process';

/** Scripts npm runs when a package is installed (or, for `prepare`, when it comes from git or a folder). */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare'];

/** The main package's manifest as published: `platformPackages` as optional dependencies at this version. */
export function publishedManifest(manifest, platformPackages) {
  const published = { ...manifest, optionalDependencies: Object.fromEntries(platformPackages.map((p) => [p, manifest.version])) };
  delete published.devDependencies;
  delete published.scripts;
  return published;
}

/** Reads package/package.json out of an npm tarball; throws if it would run anything on install. */
export function checkPackedManifest(tarball) {
  const r = spawnSync('tar', ['xzOf', tarball, 'package/package.json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pack-all: cannot read the manifest in ${tarball}: ${r.stderr}`);
  const manifest = JSON.parse(r.stdout);
  const found = INSTALL_SCRIPTS.filter((s) => manifest.scripts?.[s] !== undefined);
  // npm also runs `node-gyp rebuild` for a package that ships a binding.gyp.
  const list = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.split('\n');
  if (list.includes('package/binding.gyp')) found.push('binding.gyp (implicit node-gyp rebuild)');
  if (found.length) throw new Error(`pack-all: ${tarball} would run a lifecycle script on install: ${found.join(', ')}`);
  return manifest;
}

// package.json's `install` script. Without one, npm runs `node-gyp rebuild` for the binding.gyp at the root on
// every install of this package, including the one `npx scdv` makes of the clone into npm's cache: 8-16 s, and a
// failed rebuild (offline, no headers) deletes the built addon. The native addons are built by `npm run setup`
// (pipeline/setup/node-deps.js), only when their sources changed; this script does nothing.
'use strict';

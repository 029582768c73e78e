// The AES-256-GCM addon built for this platform by scripts/build-native.mjs
// (native/aes-gcm.c); throws when there is none. Loaded by
// src/storage/seal/native-aead.ts through the package's "./native-aead"
// export, which finds this file from the ESM and the CommonJS builds alike.
module.exports = require(`./build/aes-gcm-${process.platform}-${process.arch}.node`);

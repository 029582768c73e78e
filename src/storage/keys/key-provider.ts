/**
 * Where the keys that wrap sessions' data keys come from. Each session is
 * sealed under its own random data key (seal/); the data key is stored
 * only wrapped, by the key of its workspace, through this interface: the
 * local keyring file by default (local-keyring.ts), or a cloud KMS.
 *
 * The shape is a KMS's: sessiond never sees a workspace key, only asks to
 * wrap and unwrap a 32-byte data key under a key id (sessiond uses the
 * workspace's name) with a context bound to the result (the KMS's
 * "encryption context" / "additional authenticated data"): a wrapped key
 * copied to another session does not unwrap there.
 *
 * An implementation over AWS KMS, for example (any KMS with
 * Encrypt / Decrypt works alike):
 *
 * ```ts
 * import { DecryptCommand, EncryptCommand, KMSClient } from "@aws-sdk/client-kms";
 *
 * class AwsKms implements KeyProvider {
 *   private readonly kms = new KMSClient({});
 *   async wrap(keyId: string, dataKey: Uint8Array, context: KeyContext): Promise<WrappedKey> {
 *     const out = await this.kms.send(new EncryptCommand({
 *       KeyId: `alias/sessiond-${keyId}`, Plaintext: dataKey, EncryptionContext: { ...context },
 *     }));
 *     // KMS rotates its backing keys itself and names them in the blob: one version here.
 *     return { keyId, version: 1, wrapped: Buffer.from(out.CiphertextBlob!).toString("base64") };
 *   }
 *   async unwrap(w: WrappedKey, context: KeyContext): Promise<Uint8Array> {
 *     const out = await this.kms.send(new DecryptCommand({
 *       KeyId: `alias/sessiond-${w.keyId}`, CiphertextBlob: Buffer.from(w.wrapped, "base64"),
 *       EncryptionContext: { ...context },
 *     }));
 *     return out.Plaintext!;
 *   }
 *   async currentVersion(): Promise<number> { return 1; }
 * }
 * ```
 *
 * and `new JsonlEngine({ dataDir, encryption: { keys: new AwsKms(), workspaces: "all" } })`.
 */

/** What a wrapped key is bound to: the workspace and the session whose data key it is. */
export type KeyContext = Readonly<Record<string, string>>;

/** A data key as stored: wrapped under version `version` of key `keyId`. */
export interface WrappedKey {
  readonly keyId: string;
  readonly version: number;
  /** Opaque to sessiond: what the provider returned (base64). */
  readonly wrapped: string;
}

export interface KeyProvider {
  /**
   * Wraps `dataKey` under the current version of `keyId`, bound to
   * `context`. The local keyring makes the key (version 1) when `keyId`
   * has none yet; a KMS may refuse.
   */
  wrap(keyId: string, dataKey: Uint8Array, context: KeyContext): Promise<WrappedKey>;
  /**
   * The data key, given the same context. Throws (a SessiondError,
   * FAILED_PRECONDITION, naming the key id and version) when the key or
   * version is unknown or the wrapped key does not unwrap under it.
   */
  unwrap(wrapped: WrappedKey, context: KeyContext): Promise<Uint8Array>;
  /** The version `wrap` uses now for `keyId` (0 when it has none yet): what rewrap compares to. */
  currentVersion(keyId: string): Promise<number>;
}

/**
 * The Java client of sessiond: {@link io.github.sessiond.client.SessiondClient}
 * (the generated stubs of {@code io.github.sessiond.v1} over a channel that
 * chooses ids before send and retries UNAVAILABLE), {@link
 * io.github.sessiond.client.EntryWatch} (a WatchEntries that resumes by
 * itself), {@link io.github.sessiond.client.Pages} (every page of GetState /
 * GetTree), {@link io.github.sessiond.client.Messages} (entry builders, text
 * of a message), {@link io.github.sessiond.client.BlobParts} (content parts
 * and the blobs that stand for them), {@link io.github.sessiond.client.Ids} and {@link
 * io.github.sessiond.client.SessiondException}.
 */
package io.github.sessiond.client;

package io.github.sessiond.client;

import com.google.protobuf.ByteString;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Blobs read recently, up to a number of bytes, the least recently used out
 * first; a blob larger than the whole cache is not kept. Thread-safe.
 */
final class BlobCache {
  private final long max;
  // Guarded by this. Access order: the eldest is the least recently used.
  private final LinkedHashMap<String, ByteString> blobs = new LinkedHashMap<>(16, 0.75f, true);
  private long bytes;

  /** A cache of at most {@code max} bytes (0: keeps nothing). */
  BlobCache(long max) {
    this.max = max;
  }

  /** The blob kept under key, or null; it becomes the most recently used. */
  synchronized ByteString get(String key) {
    return blobs.get(key);
  }

  /** Keeps a blob, dropping the least recently used ones beyond the size. */
  synchronized void put(String key, ByteString data) {
    if (data.size() > max || blobs.containsKey(key)) {
      return;
    }
    blobs.put(key, data);
    bytes += data.size();
    Iterator<Map.Entry<String, ByteString>> it = blobs.entrySet().iterator();
    while (bytes > max && it.hasNext()) {
      bytes -= it.next().getValue().size();
      it.remove();
    }
  }

  /** The bytes held. */
  synchronized long bytes() {
    return bytes;
  }

  /** The keys held, least recently used first. */
  synchronized java.util.List<String> keys() {
    return java.util.List.copyOf(blobs.keySet());
  }
}

package io.github.sessiond.client;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.BlobPart;
import io.github.sessiond.v1.BlobRef;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.GetEntriesResponse;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.ImagePart;
import io.github.sessiond.v1.Message;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.ThinkingPart;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Content parts and the blobs that stand in for them ({@code BlobRef} in the
 * proto): what of a part becomes the blob, what the reference keeps, and how a
 * reference and its bytes give the part back, the same part byte for byte.
 * The rules are those of every sessiond client (src/core/blob-parts.ts).
 *
 * <p>{@link SessiondClient} applies them by itself (see {@link
 * SessiondClient.Builder#blobRefs}); {@link #resolvedPart} and {@link
 * #blobRefsOf} are for callers that keep the references and read blobs with
 * {@link SessiondClient#getBlob}.
 */
public final class BlobParts {
  /** The media type of the blob of a text or thinking part. */
  public static final String TEXT_MEDIA_TYPE = "text/plain; charset=utf-8";

  /**
   * The size (bytes of UTF-8 of a text, bytes of an image) over which Append
   * and ImportSession may upload a part as a blob, by default: 256 KiB. Such
   * parts are uploaded only while they add up to more than half the call's
   * max outbound message size (see {@link SessiondClient.Builder#uploadPartsOver}).
   */
  public static final int DEFAULT_UPLOAD_PARTS_OVER = 256 * 1024;

  /**
   * The max outbound message size assumed for a call that sets none (the
   * server's default limit on what it receives): 4 MiB. The parts over the
   * upload threshold may travel inline up to half of it.
   */
  static final int DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  /** The size of a client's cache of blobs read to resolve references, by default: 64 MiB. */
  public static final long DEFAULT_BLOB_CACHE_BYTES = 64L * 1024 * 1024;

  /** Bytes per PutBlob call (the server's GetBlob chunk size too). */
  static final int CHUNK_BYTES = 1024 * 1024;

  private static final HexFormat HEX = HexFormat.of();

  private BlobParts() {}

  /** The SHA-256 of data, 64 lower-case hex digits: the name of its blob. */
  public static String sha256Hex(byte[] data) {
    return sha256Hex(ByteString.copyFrom(data));
  }

  static String sha256Hex(ByteString data) {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
    for (ByteBuffer b : data.asReadOnlyByteBufferList()) {
      md.update(b);
    }
    return HEX.formatHex(md.digest());
  }

  /** Every blob reference of an entry (its message's content), in order. */
  public static List<BlobRef> blobRefsOf(Entry entry) {
    List<BlobRef> refs = new ArrayList<>();
    if (entry.hasMessage()) {
      addRefs(entry.getMessage(), refs);
    }
    return refs;
  }

  /**
   * The part a reference stands for, from the blob's bytes: the part that was
   * appended, field for field (TEXT: the text; THINKING: the reasoning text and
   * the reference's signature; IMAGE: the reference's media type and the bytes).
   *
   * @throws SessiondException DATA_LOSS when data is not the reference's size or
   *     a text that is not UTF-8; UNIMPLEMENTED for a reference to a part this
   *     client does not know
   */
  public static ContentPart resolvedPart(BlobRef ref, byte[] data) {
    return resolvedPart(ref, ByteString.copyFrom(data));
  }

  static ContentPart resolvedPart(BlobRef ref, ByteString data) {
    checkKnown(ref);
    if (data.size() != ref.getSize()) {
      throw new SessiondException(
          Status.Code.DATA_LOSS,
          "blob " + ref.getSha256() + ": " + data.size() + " bytes, the reference says "
              + Long.toUnsignedString(ref.getSize()));
    }
    if (ref.getPart() == BlobPart.BLOB_PART_IMAGE) {
      return ContentPart.newBuilder()
          .setImage(ImagePart.newBuilder().setMimeType(ref.getMediaType()).setData(data))
          .build();
    }
    if (!data.isValidUtf8()) {
      throw new SessiondException(
          Status.Code.DATA_LOSS, "blob " + ref.getSha256() + ": a " + ref.getPart() + " blob that is not UTF-8");
    }
    if (ref.getPart() == BlobPart.BLOB_PART_TEXT) {
      return ContentPart.newBuilder().setTextBytes(data).build();
    }
    ThinkingPart.Builder t = ThinkingPart.newBuilder().setThinkingBytes(data);
    if (ref.hasSignature()) {
      t.setSignature(ref.getSignature());
    }
    return ContentPart.newBuilder().setThinking(t).build();
  }

  /**
   * Fails UNIMPLEMENTED for a reference to a part this client cannot rebuild
   * (BLOB_PART_UNSPECIFIED, or a kind newer than this client), and
   * RESOURCE_EXHAUSTED for one larger than a Java array.
   */
  static void checkKnown(BlobRef ref) {
    BlobPart p = ref.getPart();
    if (p != BlobPart.BLOB_PART_TEXT && p != BlobPart.BLOB_PART_THINKING && p != BlobPart.BLOB_PART_IMAGE) {
      throw new SessiondException(
          Status.Code.UNIMPLEMENTED,
          "blob reference " + ref.getSha256() + " stands for a part this client does not know (" + p + ")");
    }
    if (ref.getSize() < 0 || ref.getSize() > Integer.MAX_VALUE - 8) {
      throw new SessiondException(
          Status.Code.RESOURCE_EXHAUSTED,
          "blob " + ref.getSha256() + " of " + Long.toUnsignedString(ref.getSize())
              + " bytes is larger than this client can hold");
    }
  }

  /** Fails DATA_LOSS unless data is what ref names: its size and its SHA-256. */
  static void checkContent(BlobRef ref, ByteString data) {
    if (data.size() != ref.getSize()) {
      throw new SessiondException(
          Status.Code.DATA_LOSS,
          "blob " + ref.getSha256() + ": read " + data.size() + " bytes, the reference says "
              + Long.toUnsignedString(ref.getSize()));
    }
    String got = sha256Hex(data);
    if (!got.equals(ref.getSha256())) {
      throw new SessiondException(
          Status.Code.DATA_LOSS, "blob " + ref.getSha256() + ": read bytes whose SHA-256 is " + got);
    }
  }

  /** What of a content part would be a blob: its bytes and what the reference must keep. */
  record Content(BlobPart part, ByteString bytes, String mediaType, String signature) {
    /** The part that references this content's blob (the server fills in the preview). */
    ContentPart refPart(String sha256) {
      BlobRef.Builder ref =
          BlobRef.newBuilder()
              .setSha256(sha256)
              .setSize(bytes.size())
              .setPart(part)
              .setMediaType(mediaType);
      if (signature != null) {
        ref.setSignature(signature);
      }
      return ContentPart.newBuilder().setBlob(ref).build();
    }
  }

  /**
   * The content of a text, thinking or image part over {@code over} bytes (a
   * text's UTF-8 bytes, an image's data); null for a smaller one, a tool call
   * or a reference. A string of n UTF-16 units is at most 3n bytes of UTF-8,
   * so the common small text is judged without encoding it.
   */
  static Content contentOf(ContentPart p, int over) {
    switch (p.getPartCase()) {
      case TEXT:
        if ((long) p.getText().length() * 3 <= over) {
          return null;
        }
        ByteString text = p.getTextBytes();
        return text.size() > over ? new Content(BlobPart.BLOB_PART_TEXT, text, TEXT_MEDIA_TYPE, null) : null;
      case THINKING:
        ThinkingPart t = p.getThinking();
        if ((long) t.getThinking().length() * 3 <= over) {
          return null;
        }
        ByteString thinking = t.getThinkingBytes();
        return thinking.size() > over
            ? new Content(
                BlobPart.BLOB_PART_THINKING,
                thinking,
                TEXT_MEDIA_TYPE,
                t.hasSignature() ? t.getSignature() : null)
            : null;
      case IMAGE:
        ImagePart img = p.getImage();
        return img.getData().size() > over
            ? new Content(BlobPart.BLOB_PART_IMAGE, img.getData(), img.getMimeType(), null)
            : null;
      default:
        return null;
    }
  }

  /**
   * The blob references of a GetState, GetEntries or WatchEntries answer, in
   * order; empty for anything else.
   */
  static List<BlobRef> refsOfAnswer(Object answer) {
    List<BlobRef> refs = new ArrayList<>();
    if (answer instanceof GetStateResponse r) {
      for (StateMessage m : r.getState().getMessagesList()) {
        addRefs(m.getMessage(), refs);
      }
    } else if (answer instanceof GetEntriesResponse r) {
      for (Entry e : r.getEntriesList()) {
        if (e.hasMessage()) {
          addRefs(e.getMessage(), refs);
        }
      }
    } else if (answer instanceof WatchEntriesResponse r) {
      if (r.hasEntry() && r.getEntry().hasMessage()) {
        addRefs(r.getEntry().getMessage(), refs);
      }
    }
    return refs;
  }

  private static void addRefs(Message m, List<BlobRef> refs) {
    for (ContentPart p : m.getContentList()) {
      if (p.hasBlob()) {
        refs.add(p.getBlob());
      }
    }
  }

  /**
   * The answer with every reference replaced by the part it stands for, its
   * blob's bytes taken from {@code blobs} (by SHA-256): a new message where
   * anything changed, the answer itself otherwise.
   *
   * @throws SessiondException as {@link #resolvedPart(BlobRef, byte[])}
   */
  static Object withRefsResolved(Object answer, Map<String, ByteString> blobs) {
    if (answer instanceof GetStateResponse r) {
      GetStateResponse.Builder b = null;
      for (int i = 0; i < r.getState().getMessagesCount(); i++) {
        Message m = r.getState().getMessages(i).getMessage();
        Message resolved = resolved(m, blobs);
        if (resolved != m) {
          if (b == null) {
            b = r.toBuilder();
          }
          b.getStateBuilder().getMessagesBuilder(i).setMessage(resolved);
        }
      }
      return b == null ? r : b.build();
    }
    if (answer instanceof GetEntriesResponse r) {
      GetEntriesResponse.Builder b = null;
      for (int i = 0; i < r.getEntriesCount(); i++) {
        Entry e = r.getEntries(i);
        if (!e.hasMessage()) {
          continue;
        }
        Message resolved = resolved(e.getMessage(), blobs);
        if (resolved != e.getMessage()) {
          if (b == null) {
            b = r.toBuilder();
          }
          b.getEntriesBuilder(i).setMessage(resolved);
        }
      }
      return b == null ? r : b.build();
    }
    if (answer instanceof WatchEntriesResponse r && r.hasEntry() && r.getEntry().hasMessage()) {
      Message m = r.getEntry().getMessage();
      Message resolved = resolved(m, blobs);
      return resolved == m ? r : r.toBuilder().setEntry(r.getEntry().toBuilder().setMessage(resolved)).build();
    }
    return answer;
  }

  private static Message resolved(Message m, Map<String, ByteString> blobs) {
    Message.Builder b = null;
    for (int j = 0; j < m.getContentCount(); j++) {
      ContentPart p = m.getContent(j);
      if (!p.hasBlob()) {
        continue;
      }
      ByteString data = blobs.get(p.getBlob().getSha256());
      if (data == null) {
        throw new SessiondException(
            Status.Code.INTERNAL, "blob " + p.getBlob().getSha256() + " was not read");
      }
      if (b == null) {
        b = m.toBuilder();
      }
      b.setContent(j, resolvedPart(p.getBlob(), data));
    }
    return b == null ? m : b.build();
  }
}

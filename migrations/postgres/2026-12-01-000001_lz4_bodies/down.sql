ALTER TABLE nt_messages
    ALTER COLUMN message SET COMPRESSION default,
    ALTER COLUMN message_html SET COMPRESSION default,
    ALTER COLUMN message_chat SET COMPRESSION default,
    ALTER COLUMN message_sms SET COMPRESSION default;
ALTER TABLE nt_bodies
    ALTER COLUMN message SET COMPRESSION default,
    ALTER COLUMN message_html SET COMPRESSION default,
    ALTER COLUMN message_chat SET COMPRESSION default;
